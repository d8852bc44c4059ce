// Small DOM helpers shared by the views and components; the dashboard has no framework.

// h('td', {class: 'state', 'data-agent': name}, text, child...): attributes go through
// setAttribute so that the test hooks (ids, data-*) read back exactly as written; on* keys
// take listeners; value and checked are properties because the attribute is only the default;
// style goes through the CSSOM, which the Content-Security-Policy allows (a style attribute
// it does not).
export function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
        if (v === undefined || v === null || v === false)
            continue;
        if (k.startsWith('on') && typeof v === 'function')
            el.addEventListener(k.slice(2), v);
        else if (k === 'value' || k === 'checked')
            el[k] = v;
        else if (k === 'style')
            el.style.cssText = String(v);
        else
            el.setAttribute(k, v === true ? '' : String(v));
    }
    append(el, children);
    return el;
}

function append(el, children) {
    for (const c of children) {
        if (c === undefined || c === null || c === false)
            continue;
        if (Array.isArray(c))
            append(el, c);
        else
            el.append(c instanceof Node ? c : String(c));
    }
}

// An SVG element, as h() makes an HTML one: attributes (null and undefined left out) and
// children (nodes, or text).
export function svg(tag, attrs, ...children) {
    const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [k, v] of Object.entries(attrs || {}))
        if (v !== undefined && v !== null)
            el.setAttribute(k, String(v));
    for (const c of children)
        if (c !== null && c !== undefined)
            el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return el;
}

export function clear(el) {
    while (el.firstChild)
        el.firstChild.remove();
    return el;
}

export function hostLink(name) { return h('a', {href: '#/hosts/' + encodeURIComponent(name), class: 'host-link'}, name); }

// A table row's label as links: a host, or a pair "client->server" as its two hosts.
export function rowLink(label) {
    const s = String(label ?? '');
    const i = s.indexOf('->');
    return i < 0 ? hostLink(s) : [hostLink(s.slice(0, i)), '->', hostLink(s.slice(i + 2))];
}

// A table inside a box that scrolls sideways, so a wide matrix never widens the page.
export function scrollBox(table) {
    return h('div', {class: 'table-wrap'}, table);
}
