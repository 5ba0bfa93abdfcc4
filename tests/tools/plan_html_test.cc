// The HTML plan view: page content and escaping (unit); real renders of generated models' plans
// in headless chromium whose screenshots must show the chart (resnet18, GPT-2); and the page's
// own self-test (`page.html#selftest`), run on GPT-2's plan, whose observations of search, zoom,
// pan, reset, pin, the live-bytes curve, the peak tensor's width and the labels are checked here.
#include "planner/render/plan_html.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "onepool/plan.h"
#include "tools/cli_run.h"

namespace onepool {
namespace {

size_t count_of(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

PlannedTensor tensor(int32_t id, std::string name, std::string op, size_t bytes, size_t offset,
                     int64_t first, int64_t last) {
  PlannedTensor t;
  t.id = id;
  t.name = std::move(name);
  t.producer_op = std::move(op);
  t.dtype = DType::kFloat32;
  t.shape = Shape{static_cast<int64_t>(bytes / 4)};
  t.bytes = bytes;
  t.offset = offset;
  t.first = first;
  t.last = last;
  return t;
}

// Four steps. a [0,1] @0 256 B; b [1,2] @256 512 B; c [2,3] @0 256 B; the workspace of step 1
// @768 256 B; d aliases b at +128 during step 2 (128 B logical, 0 placed).
// Live bytes per step: 256, 1024, 768, 256: the peak is step 1 with a, b and the workspace.
Plan small_plan() {
  Plan plan;
  plan.pool_bytes = 1024;
  plan.lower_bound_bytes = 1024;
  plan.naive_bytes = 1280;
  plan.algorithm = "greedy-by-size";
  plan.optimal = true;
  plan.verified = true;
  for (int i = 0; i < 4; ++i) plan.steps.push_back({str_cat("node_", i), "Relu"});
  plan.tensors.push_back(tensor(1, "conv_out", "Conv", 256, 0, 0, 1));
  plan.tensors.push_back(
      tensor(2, "evil</script><img src=x onerror=alert(1)>", "Add", 512, 256, 1, 2));
  plan.tensors.push_back(tensor(3, "relu_out", "Relu", 256, 0, 2, 3));
  PlannedTensor workspace = tensor(-1, "node_1:workspace", "Conv", 256, 768, 1, 1);
  workspace.workspace_node = 1;
  plan.tensors.push_back(workspace);
  PlannedTensor alias = tensor(4, "reshaped", "Reshape", 0, 0, 2, 2);
  alias.shape = Shape{32};
  alias.alias_of = 2;
  alias.alias_offset = 128;
  plan.tensors.push_back(alias);
  return plan;
}

}  // namespace

TEST_CASE("the peak step and the addresses of aliases") {
  const Plan plan = small_plan();
  const PlanPeak peak = find_plan_peak(plan);
  CHECK(peak.step == 1);
  CHECK(peak.live_bytes == 1024);
  CHECK(peak.live_tensors == std::vector<size_t>{0, 1, 3});  // by address: 0, 256, 768
  const std::vector<size_t> addresses = plan_tensor_addresses(plan);
  CHECK(addresses == std::vector<size_t>{0, 256, 0, 768, 384});  // d: b's 256 + 128
  CHECK(plan_step_count(plan) == 4);
  CHECK(find_plan_peak(Plan{}).live_tensors.empty());
}

// The page holds every tensor name and the summary, references nothing outside itself, and a
// name cannot close the script element: the only "</script>" are the page's own two.
TEST_CASE("the HTML page is self-contained and escapes names") {
  PlanHtmlOptions options;
  options.title = "tiny <model>";
  const std::string html = render_plan_html(small_plan(), options);
  CHECK(html.find("conv_out") != std::string::npos);
  CHECK(html.find("relu_out") != std::string::npos);
  CHECK(html.find("node_1:workspace") != std::string::npos);
  CHECK(html.find("reshaped") != std::string::npos);
  CHECK(html.find("<title>tiny &lt;model&gt;") != std::string::npos);
  CHECK(html.find("1,024 B (1.00 KiB)") != std::string::npos);  // pool and lower bound
  CHECK(html.find("greedy-by-size") != std::string::npos);
  CHECK(html.find("Live at the peak: step 1") != std::string::npos);
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find("src=\"") == std::string::npos);
  CHECK(html.find("href=") == std::string::npos);
  CHECK(count_of(html, "</script>") == 2);
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find("evil\\u003c/script>\\u003cimg") != std::string::npos);  // in the data
  CHECK(html.find("evil&lt;/script&gt;&lt;img") != std::string::npos);     // in the peak table
  // The toolbar and the pin panel the script drives.
  CHECK(html.find("<input id=\"search\"") != std::string::npos);
  CHECK(html.find("<button id=\"reset\"") != std::string::npos);
  CHECK(html.find("<div id=\"pin\" hidden>") != std::string::npos);
  CHECK(html.find("function runSelfTest()") != std::string::npos);
}

namespace {

// Decodes an 8-bit RGB/RGBA PNG with the standard library's zlib and prints
// "width height distinct_colours colourful_fraction non_white_fraction curve_fraction
// peak_fraction": the last two are the pixels of the live-bytes curve's fill and of the peak's
// red (its marker, label and line).
constexpr const char* kPngStatsScript = R"py(
import collections, struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pos, idat = 8, b''
while pos < len(data):
    length, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b'IHDR':
        width, height, depth, colour = struct.unpack('>IIBB', body[:10])
    elif kind == b'IDAT':
        idat += body
    pos += 12 + length
assert depth == 8 and colour in (2, 6), 'unsupported PNG: depth %d colour %d' % (depth, colour)
bpp = 3 if colour == 2 else 4
raw = zlib.decompress(idat)
stride = width * bpp
previous = bytearray(stride)
image = bytearray()
for y in range(height):
    filter_type = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    if filter_type == 2:  # the common case, without a per-byte index loop
        line = bytearray((a + b) & 255 for a, b in zip(line, previous))
    elif filter_type in (1, 3, 4):
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up = previous[i]
            if filter_type == 1:
                line[i] = (line[i] + left) & 255
            elif filter_type == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 255
            else:
                upper_left = previous[i - bpp] if i >= bpp else 0
                p = left + up - upper_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - upper_left)
                predictor = left if pa <= pb and pa <= pc else up if pb <= pc else upper_left
                line[i] = (line[i] + predictor) & 255
    image += line
    previous = line
# Counted per distinct colour: a few thousand, not a million pixels.
counts = collections.Counter(zip(image[0::bpp], image[1::bpp], image[2::bpp]))
colourful = non_white = curve = peak = 0
for (r, g, b), n in counts.items():
    if max(r, g, b) - min(r, g, b) > 60:
        colourful += n
    if min(r, g, b) < 240:
        non_white += n
    if abs(r - 188) + abs(g - 206) + abs(b - 235) < 16:  # the live-bytes curve's fill
        curve += n
    if abs(r - 208) + g + abs(b - 27) < 60:  # the peak's red
        peak += n
pixels = width * height
print(width, height, len(counts), colourful / pixels, non_white / pixels, curve / pixels,
      peak / pixels)
)py";

struct ScreenshotStats {
  int width = 0;
  int height = 0;
  int distinct_colours = 0;
  double colourful_fraction = 0.0;
  double non_white_fraction = 0.0;
  double curve_fraction = 0.0;
  double peak_fraction = 0.0;
};

std::string find_chromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (std::filesystem::exists(path)) return path;
  }
  return "";
}

// What the chromium tests need: the CLI, the generated models and chromium itself.
struct BrowserTestSetup {
  std::string cli;
  std::string models;
  std::string chromium;
};

BrowserTestSetup browser_test_setup() {
  BrowserTestSetup setup{test::env_or_empty("ONEPOOL_CLI"),
                         test::env_or_empty("ONEPOOL_MODELS_DIR"), find_chromium()};
  REQUIRE_MESSAGE(!setup.cli.empty(), "ONEPOOL_CLI is not set: run this test through CTest");
  REQUIRE_MESSAGE(!setup.chromium.empty(),
                  "chromium not found: install Debian's chromium package (scripts/setup.sh "
                  "installs it) to render the HTML plan view");
  return setup;
}

// `onepool plan MODEL DIM_FLAGS --format FORMAT -o OUTPUT`, which must succeed.
void plan_model(const BrowserTestSetup& setup, const std::string& model_name,
                const std::string& dim_flags, const std::string& format, const std::string& output,
                const test::ScratchDir& dir) {
  const std::string model = str_cat(setup.models, "/", model_name);
  REQUIRE_MESSAGE(std::filesystem::exists(model), "generated model missing: ", model);
  const test::CommandResult plan = test::run_command(
      str_cat(test::shell_quote(setup.cli), " plan ", test::shell_quote(model), " ", dim_flags,
              " --format ", format, " -o ", test::shell_quote(output)),
      dir.file("plan.log"));
  REQUIRE_MESSAGE(plan.exit_code == 0, plan.output);
}

// Headless chromium on `url` with ACTION ("--screenshot=PATH" or "--dump-dom") at 1200x900, the
// network disabled (every host resolves to nothing) and a throwaway profile. Returns what it
// printed; the seconds it took go to `seconds`.
test::CommandResult run_chromium(const BrowserTestSetup& setup, const test::ScratchDir& dir,
                                 const std::string& action, const std::string& url,
                                 double& seconds) {
  const auto start = std::chrono::steady_clock::now();
  test::CommandResult result = test::run_command(
      str_cat("timeout 120 ", test::shell_quote(setup.chromium),
              " --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run"
              " --disable-background-networking --host-resolver-rules='MAP * ~NOTFOUND'"
              " --user-data-dir=",
              test::shell_quote(dir.file("profile")),
              " --window-size=1200,900 --virtual-time-budget=5000 ", action, " ",
              test::shell_quote(url)),
      dir.file("chromium.log"));
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

// The page's screenshot, decoded by kPngStatsScript.
ScreenshotStats screenshot_stats(const BrowserTestSetup& setup, const test::ScratchDir& dir,
                                 const std::string& page) {
  const std::string screenshot = dir.file("plan.png");
  double seconds = 0.0;
  const test::CommandResult render = run_chromium(
      setup, dir, "--screenshot=" + test::shell_quote(screenshot), "file://" + page, seconds);
  MESSAGE("chromium screenshot took ", seconds, " s");
  REQUIRE_MESSAGE(std::filesystem::exists(screenshot), "chromium wrote no screenshot (exit ",
                  render.exit_code, "): ", render.output);
  test::write_text(dir.file("png_stats.py"), kPngStatsScript);
  const test::CommandResult decoded =
      test::run_command(str_cat("python3 ", test::shell_quote(dir.file("png_stats.py")), " ",
                                test::shell_quote(screenshot)),
                        dir.file("png_stats.log"));
  REQUIRE_MESSAGE(decoded.exit_code == 0, decoded.output);
  ScreenshotStats stats;
  std::istringstream(decoded.output) >> stats.width >> stats.height >> stats.distinct_colours >>
      stats.colourful_fraction >> stats.non_white_fraction >> stats.curve_fraction >>
      stats.peak_fraction;
  MESSAGE("screenshot stats (width height colours colourful non-white curve peak): ",
          decoded.output);
  return stats;
}

}  // namespace

// resnet18's plan, rendered at 1200x900: the screenshot is a PNG of that size with many
// colours. The op-coloured chart rectangles make about 9% of the pixels strongly coloured and
// 25% not white, the live-bytes curve's fill 3%; a page of summary and table alone is grey on
// white (about 0.1% coloured, under 5% not white, no curve).
TEST_CASE("the HTML plan view renders in headless chromium") {
  const BrowserTestSetup setup = browser_test_setup();
  test::ScratchDir dir("onepool_plan_html");
  const std::string page = dir.file("plan.html");
  plan_model(setup, "resnet18.onnx", "--dim batch=1", "html", page, dir);
  const ScreenshotStats stats = screenshot_stats(setup, dir, page);
  CHECK(stats.width == 1200);
  CHECK(stats.height == 900);
  CHECK(stats.distinct_colours > 50);
  CHECK(stats.colourful_fraction > 0.02);
  CHECK(stats.non_white_fraction > 0.08);
  CHECK(stats.curve_fraction > 0.01);
}

// GPT-2 (12 layers, 328 steps, 426 tensors) at 1200x900: measured 10,173 colours, 11.8% strongly
// coloured, 24.7% not white, 2.4% the curve's fill and 0.0225% (243 px) the peak's red (the
// marker, its label and the curve's peak dot: a peak drawn nowhere leaves under 0.01%).
TEST_CASE("the HTML plan view of a GPT-2 decoder renders in headless chromium") {
  const BrowserTestSetup setup = browser_test_setup();
  test::ScratchDir dir("onepool_plan_html_gpt2");
  const std::string page = dir.file("plan.html");
  plan_model(setup, "gpt2_decoder.onnx", "", "html", page, dir);
  const ScreenshotStats stats = screenshot_stats(setup, dir, page);
  CHECK(stats.width == 1200);
  CHECK(stats.height == 900);
  CHECK(stats.distinct_colours > 1000);
  CHECK(stats.colourful_fraction > 0.06);
  CHECK(stats.non_white_fraction > 0.15);
  CHECK(stats.curve_fraction > 0.01);
  CHECK(stats.peak_fraction > 0.0001);
}

namespace {

// The JSON the page's self-test wrote into <pre id="selftest">, from chromium's --dump-dom.
nlohmann::json selftest_result(const std::string& dom) {
  const std::string open = "<pre id=\"selftest\">";
  const size_t begin = dom.find(open);
  REQUIRE_MESSAGE(begin != std::string::npos,
                  "no <pre id=\"selftest\"> in the DOM: ", dom.substr(0, 2000));
  const size_t end = dom.find("</pre>", begin);
  REQUIRE(end != std::string::npos);
  std::string text = dom.substr(begin + open.size(), end - begin - open.size());
  // Serialized text nodes escape these three; '&' last, so "&amp;lt;" stays "&lt;".
  for (const auto& [entity, plain] :
       {std::pair<std::string, std::string>{"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}}) {
    for (size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1)) {
      text.replace(at, entity.size(), plain);
    }
  }
  return nlohmann::json::parse(text);
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The page's search rule: "op:NAME" is that op exactly, anything else a case-insensitive
// substring of the name or the op.
size_t count_search_matches(const Plan& plan, const std::string& query) {
  const std::string needle = lower(query);
  const bool exact_op = needle.rfind("op:", 0) == 0;
  return static_cast<size_t>(
      std::count_if(plan.tensors.begin(), plan.tensors.end(), [&](const PlannedTensor& tensor) {
        if (exact_op) return lower(tensor.producer_op) == needle.substr(3);
        return lower(tensor.name).find(needle) != std::string::npos ||
               lower(tensor.producer_op).find(needle) != std::string::npos;
      }));
}

// The largest tensor live at the peak step, the first of equals in plan order: the self-test
// clicks its centre.
std::string largest_at_peak(const Plan& plan, const PlanPeak& peak) {
  size_t best = peak.live_tensors.front();
  for (size_t i : peak.live_tensors) {
    if (plan.tensors[i].bytes > plan.tensors[best].bytes ||
        (plan.tensors[i].bytes == plan.tensors[best].bytes && i < best)) {
      best = i;
    }
  }
  return plan.tensors[best].name;
}

double span(const nlohmann::json& range) { return range[1].get<double>() - range[0].get<double>(); }

}  // namespace

// GPT-2's page opened as page.html#selftest?q=op:MatMul&q=h.3.attn: the page drives itself
// through synthetic events and reports JSON. Measured: live-bytes peak 4,993,024 B at step 327
// (the plan's lower bound), 146 MatMul tensors, 25 matching "h.3.attn", one wheel notch
// narrows the steps from 328 to 121 about the pointer, reset restores [0, 328) x [0, top), the
// click pins "logits", no two of 36 labels overlap.
TEST_CASE("the HTML plan view's self-test passes on a GPT-2 decoder") {
  const BrowserTestSetup setup = browser_test_setup();
  test::ScratchDir dir("onepool_plan_html_selftest");
  const std::string json_path = dir.file("plan.json");
  const std::string page = dir.file("plan.html");
  plan_model(setup, "gpt2_decoder.onnx", "", "json", json_path, dir);
  Expected<Plan> loaded = Plan::from_json(test::read_text(json_path));
  REQUIRE_MESSAGE(loaded.has_value(), loaded.status().message());
  const Plan& plan = *loaded;
  // The page of the very plan the figures come from (the CLI's --format html is this call).
  test::write_text(page, render_plan_html(plan, PlanHtmlOptions{"gpt2_decoder", json_path}));
  const PlanPeak peak = find_plan_peak(plan);
  REQUIRE(!peak.live_tensors.empty());

  const std::string op_query = "op:MatMul", name_query = "h.3.attn";
  double seconds = 0.0;
  const test::CommandResult dump =
      run_chromium(setup, dir, "--dump-dom",
                   str_cat("file://", page, "#selftest?q=", op_query, "&q=", name_query), seconds);
  MESSAGE("chromium --dump-dom took ", seconds, " s");
  REQUIRE_MESSAGE(dump.exit_code == 0, dump.output);
  const nlohmann::json result = selftest_result(dump.output);
  INFO("self-test: ", result.dump());
  REQUIRE(!result.contains("error"));

  // The live-bytes curve: its peak is the planner's lower bound, at the plan's peak step.
  CHECK(result["livePeak"]["bytes"].get<size_t>() == plan.lower_bound_bytes);
  CHECK(result["livePeak"]["bytes"].get<size_t>() == peak.live_bytes);
  CHECK(result["livePeak"]["step"].get<int64_t>() == peak.step);

  // Every tensor at the peak is at least 3 px wide and not covered by the peak line, at the
  // page's width (a step is 3.2 px there) and with the chart squeezed to 240 px, where a step
  // is 0.45 px and the narrowest peak tensor (one step) would otherwise be under a pixel.
  for (const char* report : {"peakWidth", "narrowPeakWidth"}) {
    const nlohmann::json& width = result[report];
    INFO(report);
    CHECK(width["tensors"].get<size_t>() == peak.live_tensors.size());
    CHECK(width["minWidthPx"].get<double>() >= 2.99);
    CHECK(width["centreIsPeakLine"].get<bool>() == false);
  }
  CHECK(result["narrowPeakWidth"]["stepWidthPx"].get<double>() < 1.0);

  // Search counts what the rule says and dims the rest.
  const nlohmann::json& search = result["search"];
  REQUIRE(search.size() == 2);
  const size_t matmuls = count_search_matches(plan, op_query);
  CHECK(matmuls > 0);
  CHECK(search[0]["matches"].get<size_t>() == matmuls);
  CHECK(search[0]["dimmed"].get<size_t>() == plan.tensors.size() - matmuls);
  CHECK(search[0]["shown"].get<std::string>() ==
        str_cat(matmuls, " of ", plan.tensors.size(), " tensors match"));
  CHECK(search[1]["matches"].get<size_t>() == count_search_matches(plan, name_query));
  CHECK(search[1]["matches"].get<size_t>() > 0);

  // The wheel narrows the steps about the pointer (the step under it stays put), shift+wheel
  // the addresses; each leaves the other axis alone. exp(-1) of the span per notch of 500.
  const nlohmann::json& zoom = result["zoom"];
  CHECK(span(zoom["before"]["steps"]) == doctest::Approx(plan_step_count(plan)));
  CHECK(span(zoom["afterWheel"]["steps"]) < 0.4 * span(zoom["before"]["steps"]));
  CHECK(span(zoom["afterWheel"]["addresses"]) == span(zoom["before"]["addresses"]));
  CHECK(zoom["anchorStepAfter"].get<double>() ==
        doctest::Approx(zoom["anchorStepBefore"].get<double>()).epsilon(1e-6));
  CHECK(span(zoom["afterShiftWheel"]["addresses"]) < 0.4 * span(zoom["afterWheel"]["addresses"]));
  CHECK(span(zoom["afterShiftWheel"]["steps"]) == span(zoom["afterWheel"]["steps"]));

  // Dragging right and down shows earlier steps and higher addresses, at the same zoom.
  const nlohmann::json& pan = result["pan"];
  CHECK(pan["after"]["steps"][0].get<double>() < pan["before"]["steps"][0].get<double>());
  CHECK(pan["after"]["addresses"][0].get<double>() > pan["before"]["addresses"][0].get<double>());
  CHECK(span(pan["after"]["steps"]) == doctest::Approx(span(pan["before"]["steps"])));

  // The reset button and a double-click both restore the full view.
  const nlohmann::json& reset = result["reset"];
  CHECK(reset["afterButton"] == reset["full"]);
  CHECK(span(reset["afterCtrlWheel"]["steps"]) < span(reset["full"]["steps"]));
  CHECK(span(reset["afterCtrlWheel"]["addresses"]) < span(reset["full"]["addresses"]));
  CHECK(reset["afterDoubleClick"] == reset["full"]);

  // A click pins the tensor under it; the pin survives a zoom; Escape removes it.
  const nlohmann::json& pin = result["pin"];
  const std::string expected_pin = largest_at_peak(plan, peak);
  CHECK(pin["expected"].get<std::string>() == expected_pin);
  CHECK(pin["pinned"].get<std::string>() == expected_pin);
  CHECK(pin["panelShown"].get<bool>());
  CHECK(pin["panelFirstLine"].get<std::string>() == expected_pin);
  CHECK(pin["pinnedAfterZoom"].get<std::string>() == expected_pin);
  CHECK(pin["pinnedAfterEscape"].is_null());
  CHECK(pin["panelShownAfterEscape"].get<bool>() == false);

  // No two labels overlapped in any of the drawings.
  CHECK(result["labels"]["overlapSeen"].get<bool>() == false);
  CHECK(result["labels"]["count"].get<int>() > 10);
  CHECK(result["labels"]["draws"].get<int>() > 8);
}

}  // namespace onepool
