// The HTML plan view's stylesheet and script. The script draws on a canvas rather than SVG so a
// plan of thousands of tensors stays fast; hover finds the tensor under the pointer through a
// grid of 16-pixel cells, each listing the rectangles that touch it. Tooltip text is set with
// textContent, never innerHTML, so a tensor name cannot inject markup.
#include "planner/plan_html_assets.h"

namespace onepool::plan_html {

std::string_view page_style() {
  return R"css(
body { font: 14px/1.4 system-ui, sans-serif; margin: 16px 24px; color: #1d1d1f; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; }
h1 .sub { font-weight: normal; color: #666; font-size: 16px; }
h2 { font-size: 16px; margin: 18px 0 6px; }
.source { color: #666; margin: 0 0 8px; font-family: ui-monospace, monospace; font-size: 12px; }
.summary { display: grid; grid-template-columns: repeat(auto-fill, minmax(230px, 1fr));
           gap: 4px 16px; margin: 8px 0 12px; }
.summary .item { display: flex; flex-direction: column; border-left: 3px solid #4a7bd0;
                 padding: 2px 8px; background: #f4f6fa; }
.summary .label { font-size: 11px; color: #555; text-transform: uppercase; letter-spacing: .03em; }
.summary .value { font-family: ui-monospace, monospace; font-size: 13px; }
#chart-box { position: relative; border: 1px solid #ddd; }
#chart { display: block; width: 100%; }
#overlay { position: absolute; left: 0; top: 0; width: 100%; pointer-events: none; }
#tip { position: absolute; display: none; pointer-events: none; background: rgba(20,20,24,.92);
       color: #fff; padding: 6px 8px; border-radius: 4px; font: 12px/1.35 ui-monospace, monospace;
       white-space: pre; z-index: 2; max-width: 640px; overflow: hidden; }
#legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 6px 0; font-size: 12px; }
#legend .swatch { display: inline-block; width: 12px; height: 12px; margin-right: 4px;
                  vertical-align: -2px; border: 1px solid #0003; }
table.peak { border-collapse: collapse; font-size: 12px; }
table.peak th, table.peak td { padding: 2px 10px; border-bottom: 1px solid #eee; text-align: left; }
table.peak td.num { text-align: right; font-family: ui-monospace, monospace; }
)css";
}

std::string_view page_script() {
  return R"js(
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('plan-data').textContent);
  var canvas = document.getElementById('chart');
  var tip = document.getElementById('tip');
  var overlay = document.getElementById('overlay');
  var margin = {left: 78, right: 14, top: 18, bottom: 34};
  var CELL = 16;
  var KIND_ALIAS = 1, KIND_WORKSPACE = 2;
  var state = null;
  var pointer = null;  // the mouse position over the chart, in CSS pixels

  function hue(text) {
    var h = 0;
    for (var i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) >>> 0;
    return (h * 137) % 360;
  }
  // Ops holding the most bytes get the palette's distinct colours; the rest a hashed hue.
  var PALETTE = ['#4e79a7', '#f28e2b', '#76b7b2', '#b6992d', '#59a14f', '#edc948', '#b07aa1',
                 '#ff9da7', '#9c755f', '#a0cbe8', '#ffbe7d', '#8cd17d', '#499894', '#d4a6c8'];
  var opsByBytes = (function () {
    var bytesByOp = new Map();  // a Map: op names are data, never object keys
    data.tensors.forEach(function (t) {
      if (t.k === 0) bytesByOp.set(t.op, (bytesByOp.get(t.op) || 0) + t.b);
    });
    return Array.from(bytesByOp.keys()).sort(function (a, b) {
      return bytesByOp.get(b) - bytesByOp.get(a);
    });
  })();
  var paletteIndex = new Map();
  opsByBytes.forEach(function (op, i) { if (i < PALETTE.length) paletteIndex.set(op, i); });
  function opColor(op) {
    if (paletteIndex.has(op)) return PALETTE[paletteIndex.get(op)];
    return 'hsl(' + hue(op) + ',60%,60%)';
  }
  function formatBytes(b) {
    if (b >= 1e9) return (b / 1e9).toFixed(2) + ' GB';
    if (b >= 1e6) return (b / 1e6).toFixed(2) + ' MB';
    if (b >= 1e3) return (b / 1e3).toFixed(1) + ' KB';
    return b + ' B';
  }
  function niceStep(range, count) {
    var raw = Math.max(range / count, 1e-9);
    var magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
    var factors = [1, 2, 5, 10];
    for (var i = 0; i < factors.length; i++) {
      if (factors[i] * magnitude >= raw) return factors[i] * magnitude;
    }
    return 10 * magnitude;
  }

  function geometry(width, height) {
    var steps = Math.max(1, data.steps), top = Math.max(1, data.top);
    var plotWidth = width - margin.left - margin.right;
    var plotHeight = height - margin.top - margin.bottom;
    return {
      width: width, height: height, steps: steps, top: top,
      plotWidth: plotWidth, plotHeight: plotHeight,
      x: function (step) { return margin.left + step * plotWidth / steps; },
      y: function (address) { return margin.top + plotHeight - address * plotHeight / top; }
    };
  }

  // Pixel rectangle of a tensor: steps [first, last + 1) x addresses [a, a + bytes), at least
  // one pixel each way so the smallest tensors stay visible and hoverable.
  function rectOf(g, t) {
    var x0 = g.x(t.f), x1 = g.x(t.l + 1), y0 = g.y(t.a + t.b), y1 = g.y(t.a);
    if (x1 - x0 < 1) x1 = x0 + 1;
    if (y1 - y0 < 1) y0 = y1 - 1;
    return {x: x0, y: y0, w: x1 - x0, h: y1 - y0};
  }

  function hatch(ctx, color) {
    var tile = document.createElement('canvas');
    tile.width = tile.height = 8;
    var t = tile.getContext('2d');
    t.strokeStyle = color;
    t.lineWidth = 1.5;
    t.beginPath();
    t.moveTo(0, 8); t.lineTo(8, 0);
    t.moveTo(-2, 2); t.lineTo(2, -2);
    t.moveTo(6, 10); t.lineTo(10, 6);
    t.stroke();
    return ctx.createPattern(tile, 'repeat');
  }

  function drawAxes(ctx, g) {
    ctx.fillStyle = '#fafafa';
    ctx.fillRect(margin.left, margin.top, g.plotWidth, g.plotHeight);
    ctx.strokeStyle = '#e3e3e3';
    ctx.fillStyle = '#444';
    ctx.font = '11px system-ui, sans-serif';
    ctx.lineWidth = 1;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    var yStep = niceStep(g.top, 8);
    for (var a = 0; a <= g.top; a += yStep) {
      var y = Math.round(g.y(a)) + 0.5;
      ctx.beginPath(); ctx.moveTo(margin.left, y); ctx.lineTo(margin.left + g.plotWidth, y);
      ctx.stroke();
      ctx.fillText(formatBytes(a), margin.left - 6, y);
    }
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    var xStep = Math.max(1, Math.round(niceStep(g.steps, 12)));
    for (var s = 0; s <= g.steps; s += xStep) {
      ctx.fillText(String(s), g.x(s), margin.top + g.plotHeight + 4);
    }
    ctx.fillText('step', margin.left + g.plotWidth / 2, margin.top + g.plotHeight + 18);
    ctx.save();
    ctx.translate(12, margin.top + g.plotHeight / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText('address', 0, 0);
    ctx.restore();
  }

  function drawPoolLine(ctx, g) {
    var y = Math.round(g.y(data.pool)) + 0.5;
    ctx.save();
    ctx.setLineDash([6, 4]);
    ctx.strokeStyle = '#333';
    ctx.beginPath(); ctx.moveTo(margin.left, y); ctx.lineTo(margin.left + g.plotWidth, y);
    ctx.stroke();
    ctx.restore();
    ctx.fillStyle = '#333';
    ctx.textAlign = 'right';
    ctx.textBaseline = 'bottom';
    ctx.fillText('pool ' + formatBytes(data.pool), margin.left + g.plotWidth - 4, y - 2);
  }

  function drawTensors(ctx, g, rects) {
    var workspaceFill = hatch(ctx, '#333');
    var aliasFill = hatch(ctx, 'rgba(0,0,0,0.45)');
    data.tensors.forEach(function (t, i) {
      if (t.k === KIND_ALIAS) return;
      var r = rects[i];
      ctx.fillStyle = t.k === KIND_WORKSPACE ? '#bbb' : opColor(t.op);
      ctx.fillRect(r.x, r.y, r.w, r.h);
      if (t.k === KIND_WORKSPACE) {
        ctx.fillStyle = workspaceFill;
        ctx.fillRect(r.x, r.y, r.w, r.h);
      }
      if (r.w > 3 && r.h > 3) {
        ctx.strokeStyle = 'rgba(255,255,255,0.9)';
        ctx.strokeRect(r.x + 0.5, r.y + 0.5, r.w - 1, r.h - 1);
      }
    });
    // Aliases last: an outlined, hatched overlay on the storage they share.
    data.tensors.forEach(function (t, i) {
      if (t.k !== KIND_ALIAS) return;
      var r = rects[i];
      ctx.fillStyle = aliasFill;
      ctx.fillRect(r.x, r.y, r.w, r.h);
      ctx.save();
      ctx.setLineDash([3, 2]);
      ctx.strokeStyle = '#111';
      ctx.strokeRect(r.x + 0.5, r.y + 0.5, Math.max(r.w - 1, 0), Math.max(r.h - 1, 0));
      ctx.restore();
    });
  }

  function drawPeak(ctx, g) {
    var x = Math.round(g.x(data.peakStep + 0.5)) + 0.5;
    ctx.strokeStyle = '#d0021b';
    ctx.lineWidth = 2;
    ctx.beginPath(); ctx.moveTo(x, margin.top - 4); ctx.lineTo(x, margin.top + g.plotHeight);
    ctx.stroke();
    ctx.lineWidth = 1;
    ctx.fillStyle = '#d0021b';
    ctx.textBaseline = 'bottom';
    ctx.textAlign = x > g.width / 2 ? 'right' : 'left';
    ctx.fillText('peak: step ' + data.peakStep + ', ' + formatBytes(data.peakBytes) + ' live',
                 x + (x > g.width / 2 ? -4 : 4), margin.top - 4);
  }

  function buildGrid(g, rects) {
    var cols = Math.ceil(g.width / CELL), rows = Math.ceil(g.height / CELL);
    var cells = new Array(cols * rows);
    function add(i) {
      var r = rects[i];
      var c0 = Math.max(0, Math.floor(r.x / CELL));
      var c1 = Math.min(cols - 1, Math.floor((r.x + r.w) / CELL));
      var r0 = Math.max(0, Math.floor(r.y / CELL));
      var r1 = Math.min(rows - 1, Math.floor((r.y + r.h) / CELL));
      for (var row = r0; row <= r1; row++) {
        for (var col = c0; col <= c1; col++) {
          var k = row * cols + col;
          (cells[k] || (cells[k] = [])).push(i);
        }
      }
    }
    // Owners first, aliases after: a lookup scans backwards, so the overlay wins.
    data.tensors.forEach(function (t, i) { if (t.k !== KIND_ALIAS) add(i); });
    data.tensors.forEach(function (t, i) { if (t.k === KIND_ALIAS) add(i); });
    return {cols: cols, rows: rows, cells: cells};
  }

  function tensorAt(px, py) {
    if (!state) return -1;
    var col = Math.floor(px / CELL), row = Math.floor(py / CELL);
    if (col < 0 || row < 0 || col >= state.grid.cols || row >= state.grid.rows) return -1;
    var list = state.grid.cells[row * state.grid.cols + col] || [];
    for (var j = list.length - 1; j >= 0; j--) {
      var r = state.rects[list[j]];
      if (px >= r.x && px <= r.x + r.w && py >= r.y && py <= r.y + r.h) return list[j];
    }
    return -1;
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

  // The highlight goes on a transparent canvas stacked over the chart, so hovering never
  // redraws the chart itself.
  function showTip(index, px, py) {
    var ctx = overlay.getContext('2d');
    ctx.clearRect(0, 0, state.g.width, state.g.height);
    if (index < 0) { tip.style.display = 'none'; return; }
    var r = state.rects[index];
    ctx.strokeStyle = '#000';
    ctx.lineWidth = 2;
    ctx.strokeRect(r.x, r.y, r.w, r.h);
    tip.textContent = describe(data.tensors[index]);
    tip.style.display = 'block';
    var left = px + 14, top = py + 14;
    if (left + tip.offsetWidth > state.g.width) left = Math.max(0, px - tip.offsetWidth - 14);
    if (top + tip.offsetHeight > state.g.height) top = Math.max(0, py - tip.offsetHeight - 14);
    tip.style.left = left + 'px';
    tip.style.top = top + 'px';
  }

  function legend() {
    var box = document.getElementById('legend');
    var ops = opsByBytes;
    function entry(label, color, dashed) {
      var item = document.createElement('span');
      var swatch = document.createElement('span');
      swatch.className = 'swatch';
      swatch.style.background = color;
      if (dashed) swatch.style.border = '1px dashed #111';
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(label));
      box.appendChild(item);
    }
    ops.slice(0, 24).forEach(function (op) { entry(op, opColor(op), false); });
    if (ops.length > 24) entry('+' + (ops.length - 24) + ' more ops', '#fff', false);
    entry('workspace', '#bbb', false);
    entry('alias (shares storage)', 'transparent', true);
    entry('peak step', '#d0021b', false);
  }

  function chartSize() {
    return {width: canvas.parentElement.clientWidth,
            height: Math.max(320, Math.min(640, Math.round(window.innerHeight * 0.6)))};
  }

  function draw() {
    var size = chartSize(), width = size.width, height = size.height;
    var dpr = window.devicePixelRatio || 1;
    [canvas, overlay].forEach(function (c) {
      c.style.height = height + 'px';
      c.width = Math.round(width * dpr);
      c.height = Math.round(height * dpr);
      c.getContext('2d').setTransform(dpr, 0, 0, dpr, 0, 0);
    });
    var ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, width, height);
    var g = geometry(width, height);
    var rects = data.tensors.map(function (t) { return rectOf(g, t); });
    drawAxes(ctx, g);
    drawTensors(ctx, g, rects);
    drawPoolLine(ctx, g);
    if (data.steps > 0) drawPeak(ctx, g);
    if (data.tensors.length === 0) {
      ctx.fillStyle = '#666'; ctx.textAlign = 'center';
      ctx.fillText('the plan holds no tensors', width / 2, height / 2);
    }
    state = {g: g, rects: rects, grid: buildGrid(g, rects)};
    // After a relayout the tooltip describes whatever now lies under the pointer.
    if (pointer) showTip(tensorAt(pointer.x, pointer.y), pointer.x, pointer.y);
  }

  canvas.addEventListener('mousemove', function (e) {
    pointer = {x: e.offsetX, y: e.offsetY};
    showTip(tensorAt(pointer.x, pointer.y), pointer.x, pointer.y);
  });
  canvas.addEventListener('mouseleave', function () {
    pointer = null;
    if (state) showTip(-1, 0, 0);
  });
  var pending = false;
  window.addEventListener('resize', function () {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () {
      pending = false;
      var size = chartSize();
      // A resize that leaves the chart's size alone keeps the chart and the tooltip.
      if (!state || size.width !== state.g.width || size.height !== state.g.height) draw();
    });
  });
  legend();
  draw();
})();
)js";
}

}  // namespace onepool::plan_html
