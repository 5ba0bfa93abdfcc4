// The self-test part of the HTML plan view's script (plan_html_assets.h). Opened as
// `page.html#selftest?q=QUERY&q=...`, the page drives itself the way a user would, through
// synthetic DOM events (wheel, drag, click, Escape) and the toolbar, and writes what it observed
// as JSON into `<pre id="selftest">`, where `chromium --dump-dom` makes it readable by a test.
#include "planner/render/plan_html_assets.h"

namespace onepool::plan_html {

std::string_view selftest_script() {
  return R"js(
  function selfTestRequested() { return location.hash.indexOf('#selftest') === 0; }

  // The queries after '#selftest?': q=op:MatMul&q=attn.
  function selfTestQueries() {
    var at = location.hash.indexOf('?');
    return at < 0 ? [] : new URLSearchParams(location.hash.slice(at + 1)).getAll('q');
  }

  // A synthetic mouse or wheel event at canvas point (px, py), as the browser would send it.
  function fire(type, px, py, extra) {
    var box = canvas.getBoundingClientRect();
    var init = {clientX: box.left + px, clientY: box.top + py, button: 0, bubbles: true,
                cancelable: true};
    Object.keys(extra || {}).forEach(function (key) { init[key] = extra[key]; });
    var event = type === 'wheel' ? new WheelEvent(type, init) : new MouseEvent(type, init);
    canvas.dispatchEvent(event);
  }

  function visibleRange() { return {steps: [view.s0, view.s1], addresses: [view.a0, view.a1]}; }

  // The tensors live at the peak, with their drawn widths at the full view.
  function peakTensors() {
    var out = [];
    data.tensors.forEach(function (t, i) { if (livesAtPeak(t)) out.push(i); });
    return out;
  }

  function largestAtPeak() {
    return peakTensors().reduce(function (best, i) {
      return best < 0 || data.tensors[i].b > data.tensors[best].b ? i : best;
    }, -1);
  }

  // The colour the chart shows at the centre of a rectangle (device pixels).
  function pixelAt(x, y) {
    var dpr = window.devicePixelRatio || 1;
    var p = canvas.getContext('2d').getImageData(Math.floor(x * dpr), Math.floor(y * dpr), 1, 1);
    return [p.data[0], p.data[1], p.data[2]];
  }

  function isPeakLineColour(rgb) {
    return Math.abs(rgb[0] - 0xd0) < 24 && rgb[1] < 40 && Math.abs(rgb[2] - 0x1b) < 24;
  }

  // The narrowest tensor live at the peak: its drawn width, and whether the peak line covers
  // the pixel at its centre.
  function peakWidthReport() {
    var narrowest = -1;
    peakTensors().forEach(function (i) {
      if (narrowest < 0 || state.rects[i].w < state.rects[narrowest].w) narrowest = i;
    });
    if (narrowest < 0) return {tensors: 0, minWidthPx: 0, centreIsPeakLine: false};
    var r = state.rects[narrowest], owner = data.tensors[narrowest].k !== KIND_ALIAS;
    return {tensors: peakTensors().length, minWidthPx: r.w, stepWidthPx: state.g.stepScale,
            chartWidthPx: state.g.width, name: data.tensors[narrowest].n,
            centreIsPeakLine: owner && isPeakLineColour(pixelAt(r.x + r.w / 2, r.y + r.h / 2))};
  }

  // The same with the chart squeezed to widthPx, where a step is a fraction of a pixel even
  // for a few hundred steps (a browser window cannot be made that narrow), then restored.
  function narrowPeakWidthReport(widthPx) {
    var box = canvas.parentElement;
    box.style.width = widthPx + 'px';
    draw();
    var out = peakWidthReport();
    box.style.width = '';
    draw();
    return out;
  }

  function searchReport(queries) {
    var out = queries.map(function (query) {
      searchBox.value = query;
      searchBox.dispatchEvent(new Event('input'));
      var dimmed = search.matches ? search.matches.filter(function (m) { return !m; }).length : 0;
      return {query: query, matches: search.count, dimmed: dimmed, shown: searchCount.textContent};
    });
    searchBox.value = '';
    searchBox.dispatchEvent(new Event('input'));
    return out;
  }

  // Wheel at 40% across the chart: the steps zoom about the pointer (the step under it stays
  // there), then shift+wheel zooms the addresses.
  function zoomReport() {
    // Whole pixels: synthetic mouse events carry integer coordinates.
    var g = state.g, px = Math.round(g.left + 0.4 * g.plotWidth);
    var py = Math.round(g.chartTop + g.chartHeight / 2);
    var before = visibleRange(), anchorBefore = g.stepAt(px);
    fire('wheel', px, py, {deltaY: -500});
    var afterSteps = visibleRange(), anchorAfter = state.g.stepAt(px);
    fire('wheel', px, py, {deltaY: -500, shiftKey: true});
    var afterAddresses = visibleRange();
    return {before: before, afterWheel: afterSteps, afterShiftWheel: afterAddresses,
            anchorStepBefore: anchorBefore, anchorStepAfter: anchorAfter};
  }

  // A drag of 120 px right and 40 px down, from the middle of the chart.
  function panReport() {
    var g = state.g, px = g.left + g.plotWidth / 2, py = g.chartTop + g.chartHeight / 2;
    var before = visibleRange();
    fire('mousedown', px, py);
    fire('mousemove', px + 60, py + 20);
    fire('mousemove', px + 120, py + 40);
    fire('mouseup', px + 120, py + 40);
    return {before: before, after: visibleRange(), dragPx: [120, 40]};
  }

  function resetReport() {
    resetButton.click();
    var afterButton = visibleRange();
    var g = state.g;
    fire('wheel', g.left + g.plotWidth / 3, g.chartTop + 20, {deltaY: -500, ctrlKey: true});
    var zoomedBoth = visibleRange();
    fire('dblclick', g.left + g.plotWidth / 3, g.chartTop + 20);
    return {full: {steps: [fullView.s0, fullView.s1], addresses: [fullView.a0, fullView.a1]},
            afterButton: afterButton, afterCtrlWheel: zoomedBoth, afterDoubleClick: visibleRange()};
  }

  // A click on the centre of the largest tensor at the peak pins it; Escape unpins.
  function pinReport() {
    var index = largestAtPeak();
    if (index < 0) return {expected: null};
    var r = state.rects[index], px = r.x + r.w / 2, py = r.y + r.h / 2;
    fire('mousedown', px, py);
    fire('mouseup', px, py);
    fire('click', px, py);
    var out = {expected: data.tensors[index].n, pinned: pinned >= 0 ? data.tensors[pinned].n : null,
               panelShown: !pinBox.hidden, panelFirstLine: pinText.textContent.split('\n')[0]};
    // Zooming keeps the pin.
    fire('wheel', px, py, {deltaY: -200});
    out.pinnedAfterZoom = pinned >= 0 ? data.tensors[pinned].n : null;
    resetView();
    document.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape', bubbles: true}));
    out.pinnedAfterEscape = pinned >= 0 ? data.tensors[pinned].n : null;
    out.panelShownAfterEscape = !pinBox.hidden;
    return out;
  }

  function runSelfTest() {
    var out = {};
    try {
      out.steps = data.steps;
      out.tensors = data.tensors.length;
      out.livePeak = {bytes: live.peakBytes, step: live.peakStep, dataStep: data.peakStep,
                      dataBytes: data.peakBytes};
      out.peakWidth = peakWidthReport();
      out.narrowPeakWidth = narrowPeakWidthReport(240);
      out.search = searchReport(selfTestQueries());
      out.zoom = zoomReport();
      out.pan = panReport();
      out.reset = resetReport();
      out.pin = pinReport();
      out.labels = {count: state.labels.length, overlapSeen: labelOverlapSeen, draws: drawCount};
    } catch (error) {
      out.error = String(error && error.stack || error);
    }
    var pre = document.createElement('pre');
    pre.id = 'selftest';
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
)js";
}

}  // namespace onepool::plan_html
