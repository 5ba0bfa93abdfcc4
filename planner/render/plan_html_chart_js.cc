// The chart part of the HTML plan view's script (plan_html_assets.h): the plan data, colours,
// the layout of the chart and of the live-bytes curve under it, and drawing both for the current
// view. The script draws on a canvas rather than SVG so a plan of thousands of tensors stays
// fast. Every text goes through one label layer that skips a label rather than overlap another.
#include "planner/render/plan_html_assets.h"

namespace onepool::plan_html {

std::string_view chart_script() {
  return R"js(
  var data = JSON.parse(document.getElementById('plan-data').textContent);
  var canvas = document.getElementById('chart');
  var overlay = document.getElementById('overlay');
  var KIND_ALIAS = 1, KIND_WORKSPACE = 2;
  var PEAK_COLOR = '#d0021b';
  // A tensor live at the peak step is drawn at least this wide: with thousands of steps a step
  // is a fraction of a pixel, and the tensors that make the peak must stay visible and clickable.
  var PEAK_MIN_WIDTH_PX = 3;
  var CURVE_HEIGHT = 96, CURVE_GAP = 16;
  var LABEL_FONT = '11px system-ui, sans-serif', LABEL_HEIGHT = 13, LABEL_GAP = 2;
  var margin = {left: 78, right: 14, top: 20, bottom: 34};
  var fullView = {s0: 0, s1: Math.max(1, data.steps), a0: 0, a1: Math.max(1, data.top)};
  var view = copyView(fullView);  // the visible steps [s0, s1) and addresses [a0, a1)
  var live = liveBytesPerStep();
  var state = null;  // the last drawing: geometry, tensor rectangles, hit grid, label boxes
  var labelOverlapSeen = false;  // whether any drawing so far had two labels overlapping
  var drawCount = 0;

  function copyView(v) { return {s0: v.s0, s1: v.s1, a0: v.a0, a1: v.a1}; }

  // Bytes live at each step, the way the planner's lower bound counts them: owners only (an
  // alias adds no storage), a difference array over [first, last].
  function liveBytesPerStep() {
    var steps = Math.max(1, data.steps);
    var delta = new Float64Array(steps + 1);
    function clampStep(s) { return Math.max(0, Math.min(steps, s)); }
    data.tensors.forEach(function (t) {
      if (t.k === KIND_ALIAS || t.b <= 0 || t.l < t.f) return;
      delta[clampStep(t.f)] += t.b;
      delta[clampStep(t.l + 1)] -= t.b;
    });
    var bytes = new Float64Array(steps), running = 0, peakStep = 0, peakBytes = 0;
    for (var s = 0; s < steps; s++) {
      running += delta[s];
      bytes[s] = running;
      if (running > peakBytes) { peakBytes = running; peakStep = s; }
    }
    return {bytes: bytes, peakStep: peakStep, peakBytes: peakBytes};
  }

  function livesAtPeak(t) { return t.f <= live.peakStep && live.peakStep <= t.l; }

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

  function byteUnit(b) { return b >= 1e9 ? 1e9 : b >= 1e6 ? 1e6 : b >= 1e3 ? 1e3 : 1; }
  var UNIT_NAMES = {1: ' B', 1000: ' KB', 1000000: ' MB', 1000000000: ' GB'};
  function formatBytes(b) {
    var unit = byteUnit(b);
    if (unit === 1) return b + ' B';
    return (b / unit).toFixed(unit === 1e3 ? 1 : 2) + UNIT_NAMES[unit];
  }
  // A tick label with just enough decimals to tell neighbouring ticks apart when zoomed in.
  function formatTick(b, tickStep, range) {
    var unit = byteUnit(range);
    var decimals = Math.max(0, Math.min(6, Math.ceil(-Math.log10(tickStep / unit) - 1e-9)));
    return (b / unit).toFixed(decimals) + UNIT_NAMES[unit];
  }
  function niceStep(range, count) {
    var raw = Math.max(range / Math.max(1, count), 1e-9);
    var magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
    var factors = [1, 2, 5, 10];
    for (var i = 0; i < factors.length; i++) {
      if (factors[i] * magnitude >= raw) return factors[i] * magnitude;
    }
    return 10 * magnitude;
  }

  // The chart (addresses over steps) on top, the live-bytes curve under it; both share the
  // x axis, so zooming or panning the steps moves both.
  function geometry(width, height, v) {
    var plotWidth = Math.max(10, width - margin.left - margin.right);
    var chartTop = margin.top;
    var chartHeight = Math.max(40, height - margin.top - CURVE_GAP - CURVE_HEIGHT - margin.bottom);
    var chartBottom = chartTop + chartHeight, curveTop = chartBottom + CURVE_GAP;
    var stepScale = plotWidth / (v.s1 - v.s0), addressScale = chartHeight / (v.a1 - v.a0);
    var curveMax = Math.max(1, data.pool, live.peakBytes) * 1.08;
    return {
      width: width, height: height, view: v, plotWidth: plotWidth,
      left: margin.left, right: margin.left + plotWidth,
      chartTop: chartTop, chartBottom: chartBottom, chartHeight: chartHeight,
      curveTop: curveTop, curveBottom: curveTop + CURVE_HEIGHT, curveMax: curveMax,
      stepScale: stepScale, addressScale: addressScale,
      x: function (step) { return margin.left + (step - v.s0) * stepScale; },
      y: function (address) { return chartBottom - (address - v.a0) * addressScale; },
      curveY: function (bytes) { return curveTop + CURVE_HEIGHT - bytes * CURVE_HEIGHT / curveMax; },
      stepAt: function (px) { return v.s0 + (px - margin.left) / stepScale; },
      addressAt: function (py) { return v.a0 + (chartBottom - py) / addressScale; }
    };
  }

  // Which part of the canvas a point is in: 'chart', 'curve' or '' (margins).
  function regionAt(g, px, py) {
    if (px < g.left || px > g.right) return '';
    if (py >= g.chartTop && py <= g.chartBottom) return 'chart';
    if (py >= g.curveTop && py <= g.curveBottom) return 'curve';
    return '';
  }

  // Pixel rectangle of a tensor: steps [first, last + 1) x addresses [a, a + bytes). At least a
  // pixel each way so the smallest tensors stay visible and hoverable, PEAK_MIN_WIDTH_PX for
  // those live at the peak (widened about their centre, so they still cover the peak step).
  // Clamped to just beyond the plot, so a deep zoom never hands the canvas huge coordinates.
  function rectOf(g, t) {
    var x0 = g.x(t.f), x1 = g.x(t.l + 1), y0 = g.y(t.a + t.b), y1 = g.y(t.a);
    var minWidth = livesAtPeak(t) ? PEAK_MIN_WIDTH_PX : 1;
    if (x1 - x0 < minWidth) {
      var mid = (x0 + x1) / 2;
      x0 = mid - minWidth / 2;
      x1 = mid + minWidth / 2;
      // At the plot's edge, shift inward rather than lose part of the width to the clip.
      if (mid >= g.left && x0 < g.left) { x1 += g.left - x0; x0 = g.left; }
      if (mid <= g.right && x1 > g.right) { x0 -= x1 - g.right; x1 = g.right; }
    }
    if (y1 - y0 < 1) y0 = y1 - 1;
    var visible = x1 > g.left && x0 < g.right && y0 < g.chartBottom && y1 > g.chartTop;
    x0 = Math.max(x0, g.left - 2); x1 = Math.min(x1, g.right + 2);
    y0 = Math.max(y0, g.chartTop - 2); y1 = Math.min(y1, g.chartBottom + 2);
    return {x: x0, y: y0, w: Math.max(0, x1 - x0), h: Math.max(0, y1 - y0), visible: visible};
  }

  // Every label goes through place(): one that would overlap a label already drawn, or leave
  // the canvas, is skipped. The important labels are placed first, so they always win.
  function LabelLayer(ctx, width, height) {
    this.ctx = ctx;
    this.width = width;
    this.height = height;
    this.boxes = [];
  }
  LabelLayer.prototype.boxOf = function (text, x, y) {
    var ctx = this.ctx, w = ctx.measureText(text).width, h = LABEL_HEIGHT;
    var left = ctx.textAlign === 'right' ? x - w : ctx.textAlign === 'center' ? x - w / 2 : x;
    var top = ctx.textBaseline === 'top' ? y : ctx.textBaseline === 'bottom' ? y - h : y - h / 2;
    return {x: left, y: top, w: w, h: h};
  };
  LabelLayer.prototype.fits = function (box) {
    if (box.x < 0 || box.y < 0 || box.x + box.w > this.width || box.y + box.h > this.height) {
      return false;
    }
    return !this.boxes.some(function (other) { return boxesOverlap(box, other, LABEL_GAP); });
  };
  LabelLayer.prototype.place = function (text, x, y) {
    var box = this.boxOf(text, x, y);
    if (!this.fits(box)) return false;
    this.ctx.fillText(text, x, y);
    this.boxes.push(box);
    return true;
  };
  // A vertical label (an axis title) read bottom to top, centred on (x, y).
  LabelLayer.prototype.placeVertical = function (text, x, y) {
    var w = this.ctx.measureText(text).width;
    var box = {x: x - LABEL_HEIGHT / 2, y: y - w / 2, w: LABEL_HEIGHT, h: w};
    if (!this.fits(box)) return false;
    var ctx = this.ctx;
    ctx.save();
    ctx.translate(x, y);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.fillText(text, 0, 0);
    ctx.restore();
    this.boxes.push(box);
    return true;
  };
  function boxesOverlap(a, b, gap) {
    return a.x < b.x + b.w + gap && b.x < a.x + a.w + gap &&
           a.y < b.y + b.h + gap && b.y < a.y + a.h + gap;
  }
  // Checked after every drawing (and reported by the self-test), independently of place().
  function anyLabelsOverlap(boxes) {
    for (var i = 0; i < boxes.length; i++) {
      for (var j = i + 1; j < boxes.length; j++) {
        if (boxesOverlap(boxes[i], boxes[j], 0)) return true;
      }
    }
    return false;
  }

  function setLabelStyle(ctx, color, align, baseline) {
    ctx.fillStyle = color;
    ctx.font = LABEL_FONT;
    ctx.textAlign = align;
    ctx.textBaseline = baseline;
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

  function clipTo(ctx, x, y, w, h) {
    ctx.save();
    ctx.beginPath();
    ctx.rect(x, y, w, h);
    ctx.clip();
  }

  function drawBackgrounds(ctx, g) {
    ctx.fillStyle = '#fafafa';
    ctx.fillRect(g.left, g.chartTop, g.plotWidth, g.chartHeight);
    ctx.fillRect(g.left, g.curveTop, g.plotWidth, CURVE_HEIGHT);
  }

  // The integer steps to label: spaced by the widest label, so few are skipped.
  function stepTicks(ctx, g) {
    ctx.font = LABEL_FONT;
    var widest = ctx.measureText(String(Math.ceil(g.view.s1))).width + 18;
    var every = Math.max(1, Math.round(niceStep(g.view.s1 - g.view.s0, g.plotWidth / widest)));
    var ticks = [];
    for (var s = Math.ceil(g.view.s0 / every) * every; s <= g.view.s1; s += every) ticks.push(s);
    return ticks;
  }

  function drawStepGrid(ctx, g, ticks) {
    ctx.strokeStyle = '#e3e3e3';
    ctx.lineWidth = 1;
    ticks.forEach(function (s) {
      var x = Math.round(g.x(s)) + 0.5;
      ctx.beginPath();
      ctx.moveTo(x, g.chartTop); ctx.lineTo(x, g.chartBottom);
      ctx.moveTo(x, g.curveTop); ctx.lineTo(x, g.curveBottom);
      ctx.stroke();
    });
  }

  function addressTicks(g) {
    var every = niceStep(g.view.a1 - g.view.a0, g.chartHeight / 36);
    var ticks = [];
    for (var a = Math.ceil(g.view.a0 / every) * every; a <= g.view.a1; a += every) ticks.push(a);
    return {every: every, ticks: ticks};
  }

  function drawAddressGrid(ctx, g, ticks) {
    ctx.strokeStyle = '#e3e3e3';
    ctx.lineWidth = 1;
    ticks.ticks.forEach(function (a) {
      var y = Math.round(g.y(a)) + 0.5;
      ctx.beginPath(); ctx.moveTo(g.left, y); ctx.lineTo(g.right, y); ctx.stroke();
    });
  }

  function placeAxisLabels(labels, g, steps, addresses) {
    var ctx = labels.ctx;
    setLabelStyle(ctx, '#444', 'center', 'top');
    labels.place('step', g.left + g.plotWidth / 2, g.curveBottom + 4 + LABEL_HEIGHT + LABEL_GAP + 1);
    labels.placeVertical('address', 12, g.chartTop + g.chartHeight / 2);
    labels.placeVertical('live', 12, g.curveTop + CURVE_HEIGHT / 2);
    setLabelStyle(ctx, '#444', 'center', 'top');
    steps.forEach(function (s) { labels.place(String(s), g.x(s), g.curveBottom + 4); });
    setLabelStyle(ctx, '#444', 'right', 'middle');
    var range = g.view.a1;
    addresses.ticks.forEach(function (a) {
      labels.place(formatTick(a, addresses.every, range), g.left - 6, g.y(a));
    });
    var curveEvery = niceStep(g.curveMax, 3);
    for (var b = 0; b <= g.curveMax; b += curveEvery) {
      labels.place(formatTick(b, curveEvery, g.curveMax), g.left - 6, g.curveY(b));
    }
  }

  // Where the peak step's centre is drawn; null when nothing is ever live or it is out of view.
  function peakX(g) {
    var x = g.x(live.peakStep + 0.5);
    return live.peakBytes <= 0 || x < g.left || x > g.right ? null : x;
  }

  // The peak step: a thin dashed line drawn under the tensors (so it never hides the tensors
  // that make the peak) and a solid marker above the chart, where nothing covers it.
  function drawPeakLine(ctx, g) {
    var x = peakX(g);
    if (x === null) return;
    ctx.save();
    ctx.strokeStyle = PEAK_COLOR;
    ctx.setLineDash([4, 3]);
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(Math.round(x) + 0.5, g.chartTop); ctx.lineTo(Math.round(x) + 0.5, g.curveBottom);
    ctx.stroke();
    ctx.restore();
  }

  function drawPeakMarker(ctx, labels, g) {
    var x = peakX(g);
    if (x === null) return;
    ctx.fillStyle = PEAK_COLOR;
    ctx.beginPath();
    ctx.moveTo(x - 5, g.chartTop - 8); ctx.lineTo(x + 5, g.chartTop - 8); ctx.lineTo(x, g.chartTop);
    ctx.closePath();
    ctx.fill();
    var right = x > g.left + g.plotWidth / 2;
    setLabelStyle(ctx, PEAK_COLOR, right ? 'right' : 'left', 'bottom');
    labels.place('peak: step ' + live.peakStep + ', ' + formatBytes(live.peakBytes) + ' live',
                 x + (right ? -8 : 8), g.chartTop - 2);
  }

  function drawPoolLine(ctx, labels, g) {
    if (data.pool < g.view.a0 || data.pool > g.view.a1) return;
    var y = Math.round(g.y(data.pool)) + 0.5;
    ctx.save();
    ctx.setLineDash([6, 4]);
    ctx.strokeStyle = '#333';
    ctx.beginPath(); ctx.moveTo(g.left, y); ctx.lineTo(g.right, y); ctx.stroke();
    ctx.restore();
    // On the right unless the peak's label is there already, then on the left.
    var text = 'pool ' + formatBytes(data.pool);
    setLabelStyle(ctx, '#333', 'right', 'bottom');
    if (labels.place(text, g.right - 4, y - 2)) return;
    setLabelStyle(ctx, '#333', 'left', 'bottom');
    labels.place(text, g.left + 4, y - 2);
  }

  // Search: a tensor that does not match is drawn faint; a match gets a dark outline on top.
  function drawTensors(ctx, g, rects, matches) {
    var workspaceFill = hatch(ctx, '#333');
    var aliasFill = hatch(ctx, 'rgba(0,0,0,0.45)');
    clipTo(ctx, g.left, g.chartTop, g.plotWidth, g.chartHeight);
    function alphaOf(i) { return matches && !matches[i] ? 0.12 : 1; }
    data.tensors.forEach(function (t, i) {
      var r = rects[i];
      if (t.k === KIND_ALIAS || !r.visible) return;
      ctx.globalAlpha = alphaOf(i);
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
      var r = rects[i];
      if (t.k !== KIND_ALIAS || !r.visible) return;
      ctx.globalAlpha = alphaOf(i);
      ctx.fillStyle = aliasFill;
      ctx.fillRect(r.x, r.y, r.w, r.h);
      ctx.setLineDash([3, 2]);
      ctx.strokeStyle = '#111';
      ctx.strokeRect(r.x + 0.5, r.y + 0.5, Math.max(r.w - 1, 0), Math.max(r.h - 1, 0));
      ctx.setLineDash([]);
    });
    ctx.globalAlpha = 1;
    if (matches) outlineMatches(ctx, rects, matches);
    ctx.restore();
  }

  function outlineMatches(ctx, rects, matches) {
    ctx.strokeStyle = '#000';
    ctx.lineWidth = 1;
    rects.forEach(function (r, i) {
      if (!matches[i] || !r.visible) return;
      ctx.strokeRect(r.x + 0.5, r.y + 0.5, Math.max(r.w - 1, 1), Math.max(r.h - 1, 1));
    });
  }

  // The live bytes as a step function over the visible steps: a filled area with the pool
  // as a dashed reference line, so the gap between them is the pool's waste at each step.
  function drawCurve(ctx, labels, g) {
    clipTo(ctx, g.left, g.curveTop, g.plotWidth, CURVE_HEIGHT);
    var first = Math.max(0, Math.floor(g.view.s0));
    var last = Math.min(live.bytes.length, Math.ceil(g.view.s1));
    var base = g.curveBottom;
    ctx.beginPath();
    ctx.moveTo(g.x(first), base);
    for (var s = first; s < last; s++) {
      var y = g.curveY(live.bytes[s]);
      ctx.lineTo(g.x(s), y);
      ctx.lineTo(g.x(s + 1), y);
    }
    ctx.lineTo(g.x(last), base);
    ctx.closePath();
    ctx.fillStyle = 'rgba(74,123,208,0.35)';
    ctx.fill();
    ctx.strokeStyle = '#2f5fb3';
    ctx.lineWidth = 1;
    ctx.stroke();
    var poolY = Math.round(g.curveY(data.pool)) + 0.5;
    ctx.setLineDash([6, 4]);
    ctx.strokeStyle = '#333';
    ctx.beginPath(); ctx.moveTo(g.left, poolY); ctx.lineTo(g.right, poolY); ctx.stroke();
    ctx.setLineDash([]);
    ctx.restore();
    drawCurvePeak(ctx, labels, g);
  }

  function drawCurvePeak(ctx, labels, g) {
    var x = peakX(g), y = g.curveY(live.peakBytes);
    if (x === null) return;
    ctx.fillStyle = PEAK_COLOR;
    ctx.beginPath(); ctx.arc(x, y, 3.5, 0, 2 * Math.PI); ctx.fill();
    var right = x > g.left + g.plotWidth / 2;
    setLabelStyle(ctx, PEAK_COLOR, right ? 'right' : 'left', 'top');
    labels.place('peak ' + formatBytes(live.peakBytes), x + (right ? -7 : 7), y + 3);
  }

  // Hover and click find the tensor under the pointer through a grid of 16-pixel cells, each
  // listing the rectangles that touch it.
  var CELL = 16;
  function buildGrid(g, rects) {
    var cols = Math.ceil(g.width / CELL), rows = Math.ceil(g.height / CELL);
    var cells = new Array(cols * rows);
    function add(i) {
      var r = rects[i];
      if (!r.visible) return;
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
    if (!state || regionAt(state.g, px, py) !== 'chart') return -1;
    var col = Math.floor(px / CELL), row = Math.floor(py / CELL);
    if (col < 0 || row < 0 || col >= state.grid.cols || row >= state.grid.rows) return -1;
    var list = state.grid.cells[row * state.grid.cols + col] || [];
    for (var j = list.length - 1; j >= 0; j--) {
      var r = state.rects[list[j]];
      if (px >= r.x && px <= r.x + r.w && py >= r.y && py <= r.y + r.h) return list[j];
    }
    return -1;
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
    entry('peak step', PEAK_COLOR, false);
    entry('live bytes (under the chart)', 'rgba(74,123,208,0.35)', false);
  }

  function chartSize() {
    var chartHeight = Math.max(320, Math.min(640, Math.round(window.innerHeight * 0.6)));
    return {width: canvas.parentElement.clientWidth,
            height: chartHeight + CURVE_GAP + CURVE_HEIGHT};
  }

  function sizeCanvases(width, height) {
    var dpr = window.devicePixelRatio || 1;
    [canvas, overlay].forEach(function (c) {
      c.style.height = height + 'px';
      c.width = Math.round(width * dpr);
      c.height = Math.round(height * dpr);
      c.getContext('2d').setTransform(dpr, 0, 0, dpr, 0, 0);
    });
  }

  // Draws everything for the current view. Labels are placed most important first.
  function draw() {
    var size = chartSize();
    if (!state || size.width !== state.g.width || size.height !== state.g.height) {
      sizeCanvases(size.width, size.height);
    }
    var ctx = canvas.getContext('2d');
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, size.width, size.height);
    var g = geometry(size.width, size.height, view);
    var rects = data.tensors.map(function (t) { return rectOf(g, t); });
    var labels = new LabelLayer(ctx, size.width, size.height);
    var steps = stepTicks(ctx, g), addresses = addressTicks(g);
    drawBackgrounds(ctx, g);
    drawStepGrid(ctx, g, steps);
    drawAddressGrid(ctx, g, addresses);
    drawPeakLine(ctx, g);
    drawTensors(ctx, g, rects, search.matches);
    drawPeakMarker(ctx, labels, g);
    drawPoolLine(ctx, labels, g);
    drawCurve(ctx, labels, g);
    placeAxisLabels(labels, g, steps, addresses);
    if (data.tensors.length === 0) {
      setLabelStyle(ctx, '#666', 'center', 'middle');
      labels.place('the plan holds no tensors', g.left + g.plotWidth / 2,
                   g.chartTop + g.chartHeight / 2);
    }
    state = {g: g, rects: rects, grid: buildGrid(g, rects), labels: labels.boxes};
    labelOverlapSeen = labelOverlapSeen || anyLabelsOverlap(labels.boxes);
    drawCount++;
    drawOverlay();
  }
)js";
}

}  // namespace onepool::plan_html
