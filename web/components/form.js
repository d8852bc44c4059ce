// The pieces of the forms that write (Launch, Schedules): a labelled field, the dashboard
// token's field, and the words of a refused call.

import {getToken, setToken, ApiError} from '../api.js';
import {h} from '../dom.js';

// A control with its label and an optional hint (id-hint, for aria-describedby); data-for
// is where an error of the API about it is shown.
export function field(id, label, control, hint) {
    return h('div', {class: 'field', 'data-for': id},
        h('label', {for: id}, label), control,
        hint ? h('small', {class: 'hint', id: `${id}-hint`}, hint) : null);
}

// The dashboard token's field, one for every form that writes (Launch's, the schedules'):
// it shows the token kept for this tab, and apply() keeps what was typed before a call.
export function tokenField(id) {
    const input = h('input', {id, name: 'token', type: 'password', value: getToken(),
        autocomplete: 'off', 'aria-describedby': `${id}-hint`});
    return {input, apply: () => setToken(input.value.trim()),
        field: field(id, 'dashboard token', input,
            'needed when the coordinator is not on loopback; kept for this tab only')};
}

// A refused call's words: a 401 says where the token goes.
export function refusalText(e) {
    return e instanceof ApiError && e.status === 401
        ? `${e.message}: type the coordinator's token (its --token-file) below` : e.message;
}

// Forget the errors a form shows: the general line and each field's.
export function clearFieldErrors(form, general) {
    general.hidden = true;
    general.textContent = '';
    for (const e of form.querySelectorAll('.field-error'))
        e.remove();
    for (const e of form.querySelectorAll('[aria-invalid]'))
        e.removeAttribute('aria-invalid');
}
