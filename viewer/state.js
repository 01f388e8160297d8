// state.js — owns the viewer's shared state and change notifications. Views
// read `state` and subscribe to the events they draw from; only the owner of
// a field writes it (noted beside each). No view talks to another directly.
//
// Events: 'model' (a capture loaded or replaced), 'frame' (selected frame),
// 'span' (selected span), 'view' (flame chart time range), 'budget',
// 'thresholds' (duration colours), 'theme', 'search' (also when the element filter changes), 'kinds' (frame kinds
// and thread shown), 'tab', 'status', 'reveal' (show span i in the flame
// chart), 'range-select' (the flame chart's selected range changed),
// 'stats-scope' (the statistics table's scope changed), 'flamegraph' (the
// flame graph tab's scope, focused node or sandwich name changed),
// 'focus-site' ({site, scope}: light those spans, a histogram bar's).

export const state = {
  model: null,        // data.js Model of the shown capture (app.js)
  compare: null,      // Model of the second capture, offline diff (app.js)
  live: false,        // served by a running application, not `strobe view` (app.js)
  budgetMs: 16.7,     // frame budget: the strip's budget line and × budget (app.js, the header's input)
  thresholds: { ok: 20, over: 100 }, // ms: duration colours green < ok <= orange <= over < red (settings.js)
  frame: -1,          // selected row of model.frames (frames.js, flame.js)
  span: -1,           // selected span index (flame.js, detail.js)
  search: '',         // lower-case search text (app.js)
  element: null,      // element filter: an element id (16 hex digits), its spans alone lit (detail.js, app.js)
  focusSite: null,    // a site whose instances alone are lit: the statistics table's row (search.js)
  focusScope: null,   // ... inside this scope: {t0, t1, thread?} or null for the whole capture (search.js)
  range: null,        // the range selected in the flame chart: {t0, t1} ns, or null (range.js)
  kinds: null,        // Set of frame kind names shown in the strip and list (frames.js)
  frameThread: null,  // thread whose frames the strip and list show, null: every thread (frames.js)
  view: { t0: 0, t1: 1 }, // flame chart time range, ns since capture start (flame.js)
  tab: 'timeline',    // timeline | counters | stats | sessions | diff | uitree | … (app.js)
  autoRefresh: false, // live: take a fresh snapshot every few seconds while recording (app.js)
};

const subs = new Map();

export function on(event, fn) {
  if (!subs.has(event)) subs.set(event, []);
  subs.get(event).push(fn);
}

export function emit(event, data) {
  for (const fn of subs.get(event) || []) fn(data);
}
