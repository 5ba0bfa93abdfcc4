// The interaction part of the HTML plan view's script (plan_html_assets.h): zoom (wheel, about
// the pointer), pan (drag), reset (button, double-click), search (dims what does not match),
// the hover tooltip and the pinned details (click; Escape or a click elsewhere unpins). Text
// from the plan is set with textContent, never innerHTML, so a tensor name cannot inject markup.
#include "planner/render/plan_html_assets.h"

namespace onepool::plan_html {

std::string_view view_script() {
  return R"js(
  var tip = document.getElementById('tip');
  var pinBox = document.getElementById('pin');
  var pinText = document.getElementById('pin-text');
  var searchBox = document.getElementById('search');
  var searchCount = document.getElementById('search-count');
  var resetButton = document.getElementById('reset');
  var MIN_STEP_SPAN = 2;      // zooming stops at two steps across the chart ...
  var MIN_ADDRESS_SPAN = 64;  // ... and 64 bytes down it
  var DRAG_THRESHOLD_PX = 3;  // a press that moves less than this is a click, not a pan
  var search = {query: '', matches: null, count: 0};
  var pointer = null;  // the mouse position over the canvas, in CSS pixels
  var pinned = -1;     // index of the pinned tensor, or -1
  var drag = null;     // the pan in progress: where it started and the view then
  var lastPressMoved = false;

  // Keeps [lo, hi) inside [fullLo, fullHi] and at least minSpan wide, shifting before shrinking.
  function clampRange(lo, hi, fullLo, fullHi, minSpan) {
    var span = Math.min(Math.max(hi - lo, Math.min(minSpan, fullHi - fullLo)), fullHi - fullLo);
    lo = Math.max(fullLo, Math.min(lo, fullHi - span));
    return [lo, lo + span];
  }

  function setView(next) {
    var steps = clampRange(next.s0, next.s1, fullView.s0, fullView.s1, MIN_STEP_SPAN);
    var addresses = clampRange(next.a0, next.a1, fullView.a0, fullView.a1, MIN_ADDRESS_SPAN);
    view = {s0: steps[0], s1: steps[1], a0: addresses[0], a1: addresses[1]};
    draw();
  }

  function resetView() { setView(fullView); }

  // Scales [lo, hi) by factor about anchor, so the value under the pointer stays under it.
  function zoomRange(lo, hi, anchor, factor) {
    return [anchor - (anchor - lo) * factor, anchor + (hi - anchor) * factor];
  }

  function zoomAt(px, py, factor, axes) {
    var g = state.g, next = copyView(view);
    if (axes.steps) {
      var s = zoomRange(view.s0, view.s1, g.stepAt(px), factor);
      next.s0 = s[0]; next.s1 = s[1];
    }
    if (axes.addresses) {
      var a = zoomRange(view.a0, view.a1, g.addressAt(py), factor);
      next.a0 = a[0]; next.a1 = a[1];
    }
    setView(next);
  }

  // Plain wheel: steps (the axis with thousands of entries); shift: addresses; ctrl, alt or
  // meta: both. Over the live-bytes curve only steps: its y axis is not the address.
  function wheelAxes(e, region) {
    if (region === 'curve') return {steps: true, addresses: false};
    if (e.ctrlKey || e.altKey || e.metaKey) return {steps: true, addresses: true};
    if (e.shiftKey) return {steps: false, addresses: true};
    return {steps: true, addresses: false};
  }

  function canvasPoint(e) {
    var box = canvas.getBoundingClientRect();
    return {x: e.clientX - box.left, y: e.clientY - box.top};
  }

  function onWheel(e) {
    var p = canvasPoint(e), region = regionAt(state.g, p.x, p.y);
    if (!region) return;
    e.preventDefault();
    // Shift turns a vertical wheel into a horizontal one in some browsers: take either.
    var delta = e.deltaY || e.deltaX;
    if (e.deltaMode === 1) delta *= 16;   // lines
    if (e.deltaMode === 2) delta *= 400;  // pages
    zoomAt(p.x, p.y, Math.exp(Math.max(-500, Math.min(500, delta)) * 0.002), wheelAxes(e, region));
  }

  function onMouseDown(e) {
    if (e.button !== 0) return;
    var p = canvasPoint(e), region = regionAt(state.g, p.x, p.y);
    lastPressMoved = false;
    if (!region) return;
    drag = {x: p.x, y: p.y, view: copyView(view), region: region, moved: false};
    e.preventDefault();  // no text selection while panning
  }

  // Dragging right shows earlier steps, dragging up higher addresses; the curve pans steps only.
  function panTo(p) {
    var dx = p.x - drag.x, dy = p.y - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) < DRAG_THRESHOLD_PX) return;
    drag.moved = true;
    canvas.classList.add('dragging');
    var g = state.g, start = drag.view;
    var ds = -dx / g.stepScale, da = drag.region === 'chart' ? dy / g.addressScale : 0;
    setView({s0: start.s0 + ds, s1: start.s1 + ds, a0: start.a0 + da, a1: start.a1 + da});
  }

  function onMouseMove(e) {
    var p = canvasPoint(e);
    if (drag) { panTo(p); return; }
    if (e.target !== canvas) return;
    pointer = p;
    drawOverlay();
  }

  function onMouseUp() {
    if (!drag) return;
    lastPressMoved = drag.moved;
    drag = null;
    canvas.classList.remove('dragging');
  }

  function onClick(e) {
    if (lastPressMoved) return;  // the end of a pan
    var p = canvasPoint(e);
    pin(tensorAt(p.x, p.y));
  }

  function onKeyDown(e) {
    if (e.key === 'Escape') pin(-1);
  }

  function stepName(step) {
    return step >= 0 && step < data.stepNames.length ? ' ' + data.stepNames[step] : '';
  }

  function describe(t) {
    var lines = [t.n,
                 'op:     ' + t.op + (t.k === KIND_WORKSPACE ? ' (workspace)' : ''),
                 'tensor: ' + (t.k === KIND_WORKSPACE ? '- (kernel scratch)' : t.dt + ' ' + t.sh),
                 'bytes:  ' + t.b + ' (' + formatBytes(t.b) + ')',
                 'offset: ' + t.a + ' .. ' + (t.a + t.b),
                 'steps:  ' + t.f + ' - ' + t.l + ' (' + (t.l - t.f + 1) + ')',
                 '  from' + stepName(t.f), '  to  ' + stepName(t.l)];
    if (t.k === KIND_ALIAS) lines.push('alias:  shares ' + t.of + ' at +' + t.ao);
    return lines.join('\n');
  }

  function describeStep(step) {
    var bytes = live.bytes[step] || 0;
    var share = data.pool > 0 ? ' (' + (100 * bytes / data.pool).toFixed(1) + '% of the pool)' : '';
    return 'step ' + step + stepName(step) + '\nlive:  ' + formatBytes(bytes) + share +
           (step === live.peakStep ? '\nthe peak' : '');
  }

  // The pinned details stay until another click or Escape; the tooltip follows the pointer.
  function pin(index) {
    pinned = index;
    pinBox.hidden = index < 0;
    pinText.textContent = index < 0 ? '' : describe(data.tensors[index]);
    drawOverlay();
  }

  function showTip(text, px, py) {
    if (!text) { tip.style.display = 'none'; return; }
    tip.textContent = text;
    tip.style.display = 'block';
    var left = px + 14, top = py + 14;
    if (left + tip.offsetWidth > state.g.width) left = Math.max(0, px - tip.offsetWidth - 14);
    if (top + tip.offsetHeight > state.g.height) top = Math.max(0, py - tip.offsetHeight - 14);
    tip.style.left = left + 'px';
    tip.style.top = top + 'px';
  }

  function outline(ctx, index, color, width) {
    var r = state.rects[index];
    if (!r.visible) return;
    ctx.strokeStyle = color;
    ctx.lineWidth = width;
    ctx.strokeRect(r.x, r.y, r.w, r.h);
  }

  // Hover and pin marks go on a transparent canvas stacked over the chart, so moving the
  // pointer never redraws the chart itself. A hairline at the pointer crosses the chart and
  // the curve: they share the step axis.
  function drawOverlay() {
    var g = state.g, ctx = overlay.getContext('2d');
    ctx.clearRect(0, 0, g.width, g.height);
    if (pinned >= 0) outline(ctx, pinned, '#1f5fd6', 3);
    var region = pointer && !drag ? regionAt(g, pointer.x, pointer.y) : '';
    if (!region) { showTip('', 0, 0); return; }
    ctx.strokeStyle = 'rgba(0,0,0,0.35)';
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(Math.round(pointer.x) + 0.5, g.chartTop);
    ctx.lineTo(Math.round(pointer.x) + 0.5, g.curveBottom);
    ctx.stroke();
    if (region === 'curve') {
      showTip(describeStep(Math.floor(g.stepAt(pointer.x))), pointer.x, pointer.y);
      return;
    }
    var index = tensorAt(pointer.x, pointer.y);
    if (index >= 0) outline(ctx, index, '#000', 2);
    showTip(index >= 0 ? describe(data.tensors[index]) : '', pointer.x, pointer.y);
  }

  // "op:NAME" matches that op exactly; anything else is a case-insensitive substring of the
  // tensor's name or its op.
  function matcherFor(query) {
    var text = query.trim().toLowerCase();
    if (text.indexOf('op:') === 0) {
      var op = text.slice(3).trim();
      return function (t) { return t.op.toLowerCase() === op; };
    }
    return function (t) {
      return t.n.toLowerCase().indexOf(text) >= 0 || t.op.toLowerCase().indexOf(text) >= 0;
    };
  }

  function setSearch(query) {
    search.query = query;
    if (!query.trim()) {
      search.matches = null;
      search.count = 0;
      searchCount.textContent = '';
    } else {
      var match = matcherFor(query);
      search.matches = data.tensors.map(match);
      search.count = search.matches.filter(Boolean).length;
      searchCount.textContent = search.count + ' of ' + data.tensors.length + ' tensors match';
    }
    draw();
  }

  function onResize() {
    if (onResize.pending) return;
    onResize.pending = true;
    window.requestAnimationFrame(function () {
      onResize.pending = false;
      var size = chartSize();
      // A resize that leaves the chart's size alone keeps the chart and the tooltip.
      if (size.width !== state.g.width || size.height !== state.g.height) draw();
    });
  }

  function bindEvents() {
    canvas.addEventListener('wheel', onWheel, {passive: false});
    canvas.addEventListener('mousedown', onMouseDown);
    window.addEventListener('mousemove', onMouseMove);
    window.addEventListener('mouseup', onMouseUp);
    canvas.addEventListener('click', onClick);
    canvas.addEventListener('dblclick', resetView);
    canvas.addEventListener('mouseleave', function () { pointer = null; drawOverlay(); });
    document.addEventListener('keydown', onKeyDown);
    document.getElementById('pin-close').addEventListener('click', function () { pin(-1); });
    resetButton.addEventListener('click', resetView);
    searchBox.addEventListener('input', function () { setSearch(searchBox.value); });
    window.addEventListener('resize', onResize);
  }
)js";
}

}  // namespace onepool::plan_html
