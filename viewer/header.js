// header.js — owns the header bar: what is shown (file name or live
// application, pid, library version, os/arch), its clock, span and frame
// counts, losses (first: every other figure misses them) and how the capture
// ended, what recording cost per event on the recording threads and in the
// drain (so a reader can judge whether it biases the numbers), for a merged
// capture each input's process, alignment, shift and bound, and, when
// live, the Record / Stop toggle, Refresh, auto-refresh and the recorder's fill.
// The live loop calls it every second: the figures are replaced only when
// their text changed, and the controls are made once and kept (only their
// state changes), so a click never lands on a node that a redraw removed.

import * as fmt from './fmt.js';

export const AUTO_REFRESH_S = 1;

export function renderHeader(el, model, live, rec, auto = false) {
  const parts = [];
  if (model) {
    const m = model.meta, h = m.header, t = m.totals;
    // A merged capture is its inputs' processes (the file is the viewer's temporary merge, or strobe merge's output).
    const who = m.origin === 'live' ? `live · pid ${h.pid}`
      : m.merge ? m.merge.inputs.map((i) => `${fmt.esc(i.process)} · pid ${i.pid}`).join(' + ') : `${fmt.esc(m.label)} · pid ${h.pid}`;
    parts.push(`<span class="id" title="capture kind ${fmt.esc(h.kind)}, format ${h.version}, features ${fmt.esc(h.features)}">${who}` +
      ` <span class="dim">strobe ${fmt.esc(h.strobe_version)} · ${fmt.esc(h.os)}/${fmt.esc(h.arch)}</span></span>`);
    parts.push(`<span title="tick source and calibration against CLOCK_MONOTONIC">clock ${fmt.esc(h.clock_source)}${h.clock_invariant ? ' (invariant)' : ' <span class="warn">(not invariant)</span>'}` +
      ` · ${h.ns_per_tick != null ? h.ns_per_tick.toPrecision(4) : '?'} ns/tick</span>`);
    parts.push(`<span>${fmt.count(model.n)} spans · ${fmt.count(model.frames.rows)} ${model.meta.activity ? 'top-level scopes (no frames)' : 'frames'} · ${fmt.dur(model.range.hi - model.range.lo)}</span>`);
    const lost = t.lost + t.lost_scopes;
    // Loss first: every other figure misses the events it counts.
    parts.unshift(`<span class="${lost ? 'warn' : 'dim'}" title="events dropped because a thread's ring was full (overflow mode ${fmt.esc(h.overflow || '?')}); scopes whose END was lost">` +
      `${lost ? '⚠ ' : ''}lost ${fmt.count(t.lost)} events${t.lost ? ` (${(100 * t.lost / (t.lost + t.events)).toFixed(2)} %)` : ''}${t.lost_scopes ? ` · ${fmt.count(t.lost_scopes)} scopes` : ''}</span>`);
    if (t.unwound) parts.push(`<span class="warn" title="scopes whose END never ran (longjmp, exception, thread exit): closed when found, shown hatched, never given a duration">${fmt.count(t.unwound)} unwound</span>`);
    const calls = t.calls || {}, cut = (calls.cut_depth || 0) + (calls.cut_stack || 0) + (calls.cut_functions || 0);
    if (cut || calls.excluded || calls.unresolved)
      parts.push(`<span class="${cut ? 'warn' : 'dim'}" title="call tracing (docs/exploration.md): traced calls not recorded: ${fmt.count(calls.cut_depth || 0)} deeper than max_depth, ${fmt.count(calls.cut_stack || 0)} past the tracer's stack, ${fmt.count(calls.cut_functions || 0)} past the function table, ${fmt.count(calls.excluded || 0)} excluded by name; ${fmt.count(calls.unresolved || 0)} functions had no symbol">` +
        `${fmt.count(cut)} traced calls cut${calls.excluded ? ` · ${fmt.count(calls.excluded)} excluded` : ''}${calls.unresolved ? ` · ${fmt.count(calls.unresolved)} unnamed functions` : ''}</span>`);
    if (t.unfinished) parts.push(`<span class="warn" title="scopes still open at the end: shown hatched, never given a duration">${fmt.count(t.unfinished)} unfinished</span>`);
    if (m.crash) { // where the process died (docs/recording.md §Crashes): the open scopes of each thread in the title
      const where = m.crash.threads.map((th) => `${th.name || '(unnamed)'}: ${th.open_scopes.join(' › ') || 'no open scope'}`).join('\n');
      parts.push(`<span class="warn crashed" title="${fmt.esc(where)}">crashed: ${fmt.esc(m.crash.message)}</span>`);
    }
    if (m.read_error) parts.push(`<span class="warn">ends early: ${fmt.esc(m.read_error.message)}</span>`);
    else if (t.cut_short && m.origin !== 'live') parts.push('<span class="warn" title="no footer: killed, crashed or still being written">cut short</span>');
    if (m.merge) {
      // A merged capture (docs/cli.md §strobe merge): how its processes were put on one clock, and what was not carried.
      const how = mergeInputs(m.merge).join('\n');
      const cut = Object.entries(m.merge.not_merged || {});
      parts.push(`<span class="merged" title="${fmt.esc(how)}">merged ${m.merge.inputs.length} captures · within ${fmt.dur(m.merge.error_ns)}</span>`);
      if (cut.length) parts.push(`<span class="warn" title="records of the inputs strobe merge could not carry: read them in the input captures">not merged: ${cut.map(([k, n]) => `${fmt.count(n)} ${fmt.esc(k)}`).join(', ')}</span>`);
    }
    const xp = m.cross_process;
    if (xp && xp.joined + xp.resumed_without_origin + xp.not_resumed) {
      // Operations handed between processes (docs/viewer.md §Across processes).
      const lost = m.merge && xp.not_resumed;
      parts.push(`<span class="${lost ? 'warn' : 'dim'}" title="operations one process handed to another (docs/sessions.md §Across processes): ` +
        `${fmt.count(xp.joined)} with both halves here, each one entry across both processes' lanes; ${fmt.count(xp.resumed_without_origin)} resumed here from a process whose capture is not here; ` +
        `${fmt.count(xp.not_resumed)} handed off and not resumed in this capture${xp.processes_cut ? `; ${fmt.count(xp.processes_cut)} records past the model's process labels not joined` : ''}">` +
        `${fmt.count(xp.joined + xp.resumed_without_origin)} across processes${xp.not_resumed ? ` · ${fmt.count(xp.not_resumed)} handed off, not resumed${m.merge ? '' : ' here'}` : ''}</span>`);
    }
    if (m.clock_offsets && m.clock_offsets.length)
      parts.push(`<span class="dim" title="${fmt.esc(m.clock_offsets.map(o => `${o.peer} (boot ${o.peer_boot_id.slice(0, 8)}): ${o.offset_ns < 0 ? '−' : '+'}${fmt.dur(Math.abs(o.offset_ns))} ± ${fmt.dur(o.error_ns)}, round trip ${fmt.dur(o.rtt_ns)}`).join('; '))}">${m.clock_offsets.length} clock-offset sample${m.clock_offsets.length === 1 ? '' : 's'}</span>`);
    // A report (`strobe export --format html`, docs/viewer.md §One file) says it is one.
    if (rec && rec.report) parts.push('<span class="report-note" title="a self-contained report written by strobe export --format html: no server, no live data">report</span>');
    if (m.spans_cut) parts.push(`<span class="warn">${fmt.count(m.spans_cut)} spans past the ${fmt.count(m.max_spans)} bound not loaded</span>`);
    const drain = t.drain_events ? (t.drain_cpu_ns / t.drain_events).toFixed(1) + ' ns' : '?';
    // A merge carries no recording cost of its own (docs/cli.md §strobe merge): each input's header has its own.
    if (m.merge && h.event_cost_ns == null && !t.drain_events)
      parts.push('<span class="dim" title="what recording cost is each input\'s (strobe info INPUT gives it): a merged capture carries none">cost: in each input</span>');
    else parts.push(`<span title="what recording cost (docs/recording.md, Cost): per event on the recording threads, calibrated by the writer (a mixed sequence of scopes, values and counters through a full-size ring; ${h.overhead_per_scope_ns != null ? h.overhead_per_scope_ns.toFixed(1) : '?'} ns per scope); and the drain thread's CPU time per event it drained, measured">` +
      `cost ${h.event_cost_ns != null ? h.event_cost_ns.toFixed(1) + ' ns' : '?'}/event · drain ${drain}/event</span>`);
  } else {
    parts.push('<span class="dim">no capture loaded</span>');
  }
  let info = el.querySelector(':scope > .hinfo');
  if (!info) {
    el.innerHTML = '<span class="hinfo"></span><span class="hlive"></span>';
    info = el.querySelector(':scope > .hinfo');
  }
  const html = parts.join('<span class="sep"></span>');
  if (info.dataset.html !== html) { info.innerHTML = html; info.dataset.html = html; }
  liveControls(el.querySelector(':scope > .hlive'), live, rec, auto);
}

// Each input of a merged capture: its process and pid, how it was aligned, its shift and its bound.
export function mergeInputs(merge) {
  return merge.inputs.map((i) => `${i.process} pid ${i.pid}: ${i.alignment}` +
    (i.alignment === 'reference' ? ' (the reference clock)' : ` shifted ${i.shift_ns < 0 ? '−' : '+'}${fmt.dur(Math.abs(i.shift_ns))}`) +
    `, within ${fmt.dur(i.error_ns)}`);
}

// The live controls, made once and then only updated: Record / Stop, Refresh, auto, the recorder's fill.
function liveControls(box, live, rec, auto) {
  box.hidden = !live;
  if (!live) return;
  if (!box.firstChild) {
    box.innerHTML = '<span class="sep"></span><button id="rec"></button><button id="refresh" title="take a fresh snapshot">⟳</button>' +
      `<label title="take a fresh snapshot every ${AUTO_REFRESH_S} s while recording (the view, selection and range are kept; a view at the newest data follows it)">` +
      '<input type="checkbox" id="auto"> auto</label><span class="fill dim"></span><span class="building dim">snapshot…</span>';
  }
  const on = !!(rec && rec.recording);
  const b = box.querySelector('#rec'), r = box.querySelector('#refresh'), a = box.querySelector('#auto');
  const text = on ? '■ Stop' : '● Record';
  if (b.textContent !== text) {
    b.textContent = text;
    b.className = on ? 'recording' : '';
    b.title = on ? 'stop: keep what the recorder holds' : 'record the last 10 s of the application (flight recorder)';
  }
  r.disabled = !on;
  a.disabled = !on;
  if (a.checked !== !!auto) a.checked = !!auto;
  const fill = on && rec.recorder ? `${rec.recorder.retained_seconds.toFixed(1)} s · ${fmt.bytes(rec.recorder.retained_bytes)} of ${fmt.bytes(rec.recorder.capacity_bytes)}` : '';
  const f = box.querySelector('.fill');
  if (f.textContent !== fill) f.textContent = fill;
  f.hidden = !fill;
  box.querySelector('.building').hidden = !(rec && rec.building);
}
