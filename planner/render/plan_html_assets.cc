// The HTML plan view's stylesheet, and the script assembled from its parts (plan_html_assets.h).
#include "planner/render/plan_html_assets.h"

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
#toolbar { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 10px; margin: 6px 0; }
#search { width: 360px; font: 13px ui-monospace, monospace; padding: 3px 6px; }
#search-count { font-size: 12px; color: #333; min-width: 120px; }
#toolbar .hint { font-size: 11px; color: #777; }
#chart-box { position: relative; border: 1px solid #ddd; }
#chart { display: block; width: 100%; cursor: grab; }
#chart.dragging { cursor: grabbing; }
#pin { position: relative; margin: 6px 0; padding: 6px 30px 6px 10px; border-left: 3px solid #1f5fd6;
       background: #f4f6fa; }
#pin pre { margin: 0; font: 12px/1.35 ui-monospace, monospace; white-space: pre-wrap; }
#pin button { position: absolute; right: 4px; top: 4px; }
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
details.nested { margin: 4px 0; }
details.nested summary { cursor: pointer; font-size: 13px; }
svg.nested-chart { display: block; margin: 6px 0; background: #fafafa; border: 1px solid #ddd; }
svg.nested-chart rect { fill: #7aa6d6; stroke: #2f5d8a; stroke-width: 0.5; }
)css";
}

std::string page_script() {
  std::string script = "\n(function () {\n  'use strict';\n";
  script += chart_script();
  script += view_script();
  script += selftest_script();
  // Start-up: the legend, the event handlers, the first drawing, then the self-test if asked.
  script += R"js(
  legend();
  bindEvents();
  draw();
  if (selfTestRequested()) runSelfTest();
})();
)js";
  return script;
}

}  // namespace onepool::plan_html
