// The HTML plan view: page content and escaping (unit), and a real render of a generated model's
// plan in headless chromium whose screenshot must show the chart.
#include "planner/plan_html.h"

#include <doctest/doctest.h>

#include <filesystem>
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
}

namespace {

// Decodes an 8-bit RGB/RGBA PNG with the standard library's zlib and prints
// "width height distinct_colours colourful_fraction non_white_fraction".
constexpr const char* kPngStatsScript = R"py(
import struct, sys, zlib
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
colours, colourful, non_white = set(), 0, 0
for y in range(height):
    filter_type = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        left = line[i - bpp] if i >= bpp else 0
        up = previous[i]
        if filter_type == 1:
            line[i] = (line[i] + left) & 255
        elif filter_type == 2:
            line[i] = (line[i] + up) & 255
        elif filter_type == 3:
            line[i] = (line[i] + ((left + up) >> 1)) & 255
        elif filter_type == 4:
            upper_left = previous[i - bpp] if i >= bpp else 0
            p = left + up - upper_left
            pa, pb, pc = abs(p - left), abs(p - up), abs(p - upper_left)
            predictor = left if pa <= pb and pa <= pc else up if pb <= pc else upper_left
            line[i] = (line[i] + predictor) & 255
    for x in range(0, stride, bpp):
        r, g, b = line[x], line[x + 1], line[x + 2]
        colours.add((r, g, b))
        if max(r, g, b) - min(r, g, b) > 60:
            colourful += 1
        if min(r, g, b) < 240:
            non_white += 1
    previous = line
pixels = width * height
print(width, height, len(colours), colourful / pixels, non_white / pixels)
)py";

struct ScreenshotStats {
  int width = 0;
  int height = 0;
  int distinct_colours = 0;
  double colourful_fraction = 0.0;
  double non_white_fraction = 0.0;
};

std::string find_chromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (std::filesystem::exists(path)) return path;
  }
  return "";
}

}  // namespace

// resnet18's plan, rendered at 1200x900 with the network disabled (every host resolves to
// nothing): the screenshot is a PNG of that size with many colours. The op-coloured chart
// rectangles make about 5.5% of the pixels strongly coloured and 18% not white; a page of
// summary and table alone is grey on white (about 0.1% coloured, under 5% not white).
TEST_CASE("the HTML plan view renders in headless chromium") {
  const std::string cli = test::env_or_empty("ONEPOOL_CLI");
  const std::string models = test::env_or_empty("ONEPOOL_MODELS_DIR");
  REQUIRE_MESSAGE(!cli.empty(), "ONEPOOL_CLI is not set: run this test through CTest");
  const std::string model = models + "/resnet18.onnx";
  REQUIRE_MESSAGE(std::filesystem::exists(model), "generated model missing: ", model);
  const std::string chromium = find_chromium();
  REQUIRE_MESSAGE(!chromium.empty(),
                  "chromium not found: install Debian's chromium package (scripts/setup.sh "
                  "installs it) to render the HTML plan view");

  test::ScratchDir dir("onepool_plan_html");
  const std::string page = dir.file("plan.html");
  const test::CommandResult plan =
      test::run_command(str_cat(test::shell_quote(cli), " plan ", test::shell_quote(model),
                                " --dim batch=1 --format html -o ", test::shell_quote(page)),
                        dir.file("plan.log"));
  REQUIRE_MESSAGE(plan.exit_code == 0, plan.output);

  const std::string screenshot = dir.file("plan.png");
  const test::CommandResult render = test::run_command(
      str_cat("timeout 120 ", test::shell_quote(chromium),
              " --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run"
              " --disable-background-networking --host-resolver-rules='MAP * ~NOTFOUND'"
              " --user-data-dir=",
              test::shell_quote(dir.file("profile")), " --window-size=1200,900 --screenshot=",
              test::shell_quote(screenshot), " ", test::shell_quote(str_cat("file://", page))),
      dir.file("chromium.log"));
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
      stats.colourful_fraction >> stats.non_white_fraction;
  INFO("screenshot stats: ", decoded.output);
  CHECK(stats.width == 1200);
  CHECK(stats.height == 900);
  CHECK(stats.distinct_colours > 50);
  CHECK(stats.colourful_fraction > 0.02);
  CHECK(stats.non_white_fraction > 0.08);
}

}  // namespace onepool
