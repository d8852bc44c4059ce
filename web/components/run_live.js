// What a run's page says while the run goes: the job running now (the list follows it), and
// an estimate of the time left from the pace of the jobs finished so far.

import {h, hostLink} from '../dom.js';

const PAUSE_MS = 10000; // after the reader scrolls the list, it is not moved for this long

// "45 s", "12 min", "2 h 5 min".
export function fmtDuration(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 90)
        return `${s} s`;
    const min = Math.round(s / 60);
    if (min < 90)
        return `${min} min`;
    return `${Math.floor(min / 60)} h ${min % 60} min`;
}

// The time left of a running run: the jobs not finished at the pace of those finished since
// the first one started; '' before one has finished. start_ms: when its first job started
// (the run's creation when not known: it may have waited for its hosts).
export function etaText(run, now, startMs) {
    const p = run.progress || {};
    const finished = (Number(p.done) || 0) + (Number(p.failed) || 0);
    const total = Number(p.total) || 0;
    const start = Number(startMs) > 0 ? Number(startMs) : Number(run.created_ms);
    if (finished < 1 || total <= finished || !(start > 0) || now <= start)
        return '';
    const left = ((total - finished) * (now - start)) / finished;
    return `about ${fmtDuration(left)} left (an estimate from the pace of the ${finished} ` +
        `job${finished === 1 ? '' : 's'} finished so far)`;
}

// When the first of these jobs started, or 0.
export function firstStart(list) {
    const t = list.map((j) => Number(j.started_ms)).filter((x) => x > 0);
    return t.length ? Math.min(...t) : 0;
}

const paused = new WeakMap(); // the list -> until when the reader has it

// The job running now (or the next assigned), said above the list and scrolled into the list's
// view, unless the reader scrolled the list in the last few seconds. jobLis: job id -> {li}.
export function followRunning(ul, list, note, jobLis) {
    if (!paused.has(ul)) {
        paused.set(ul, 0);
        for (const ev of ['wheel', 'touchmove', 'keydown'])
            ul.addEventListener(ev, () => paused.set(ul, Date.now() + PAUSE_MS), {passive: true});
    }
    const now = list.find((j) => j.state === 'running') || list.find((j) => j.state === 'assigned');
    for (const li of ul.querySelectorAll('li.current'))
        li.classList.remove('current');
    if (!now) {
        note.hidden = true;
        delete note.dataset.job;
        return;
    }
    const x = jobLis.get(String(now.id));
    note.hidden = false;
    note.dataset.job = String(now.id);
    note.replaceChildren(h('strong', {}, `${now.state === 'running' ? 'Running now' : 'Next'}: `),
        h('span', {class: 'job-id'}, `#${now.id}`), ' ',
        now.peer ? [hostLink(now.host), '->', hostLink(now.peer)] : hostLink(now.host),
        ` ${now.test || ''}`,
        now.repetition === null || now.repetition === undefined ? ''
            : now.warmup ? `, warm-up ${now.repetition}` : `, rep ${now.repetition}`);
    if (!x)
        return;
    x.li.classList.add('current');
    if (Date.now() < paused.get(ul))
        return;
    const top = x.li.offsetTop, bottom = top + x.li.offsetHeight;
    if (top < ul.scrollTop || bottom > ul.scrollTop + ul.clientHeight)
        ul.scrollTop = Math.max(0, top - Math.round(ul.clientHeight / 3));
}
