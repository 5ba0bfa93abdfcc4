// ShapeProfile: `--shapes` text with ranges, and checks of concrete shapes against it.
#include <charconv>

#include "onepool/shape_profile.h"
#include "planner/core/flag_split.h"

namespace onepool {

namespace {

Expected<int64_t> parse_dim_value(std::string_view text, const std::string& context) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value <= 0) {
    return make_status(StatusCode::kInvalidArgument, context, ": '", text,
                       "' is not a positive integer");
  }
  return value;
}

// "[lo..hi]" or "[lo..hi:step]".
Expected<DimRange> parse_range(std::string_view body, const std::string& context) {
  const size_t dots = body.find("..");
  if (dots == std::string_view::npos) {
    return make_status(StatusCode::kInvalidArgument, context, ": '[", body,
                       "]' is not a range; expected [lo..hi] or [lo..hi:step]");
  }
  std::string_view high_text = body.substr(dots + 2);
  DimRange range;
  const size_t colon = high_text.find(':');
  if (colon != std::string_view::npos) {
    ONEPOOL_ASSIGN_OR_RETURN(range.step, parse_dim_value(high_text.substr(colon + 1), context));
    high_text = high_text.substr(0, colon);
  }
  ONEPOOL_ASSIGN_OR_RETURN(range.min, parse_dim_value(body.substr(0, dots), context));
  ONEPOOL_ASSIGN_OR_RETURN(range.max, parse_dim_value(high_text, context));
  if (range.min > range.max) {
    return make_status(StatusCode::kInvalidArgument, context, ": range [", range.min, "..",
                       range.max, "] is empty (lo > hi)");
  }
  if ((range.max - range.min) % range.step != 0) {
    return make_status(StatusCode::kInvalidArgument, context, ": range [", range.min, "..",
                       range.max, "] does not end on its step ", range.step);
  }
  return range;
}

Expected<DimRange> parse_axis(const std::string& text, const std::string& context) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    return parse_range(std::string_view(text).substr(1, text.size() - 2), context);
  }
  ONEPOOL_ASSIGN_OR_RETURN(int64_t value, parse_dim_value(text, context));
  return DimRange{value, value, 1};
}

Expected<InputShapeRange> parse_entry(const std::string& entry) {
  const std::vector<std::string> parts = split_outside_brackets(entry, ':');
  if (parts.size() < 2 || parts.back().empty()) {
    return make_status(StatusCode::kInvalidArgument, "--shapes entry '", entry,
                       "': expected name:1x3x[320..1280]x[320..1280]");
  }
  InputShapeRange input;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (i > 0) input.name += ':';
    input.name += parts[i];
  }
  if (input.name.empty()) {
    return make_status(StatusCode::kInvalidArgument, "--shapes entry '", entry,
                       "' has an empty input name");
  }
  const std::vector<std::string> axes = split_outside_brackets(parts.back(), 'x');
  for (size_t axis = 0; axis < axes.size(); ++axis) {
    const std::string context = str_cat("--shapes input '", input.name, "' axis ", axis);
    ONEPOOL_ASSIGN_OR_RETURN(DimRange range, parse_axis(axes[axis], context));
    input.dims.push_back(range);
  }
  if (input.dims.size() > static_cast<size_t>(Shape::kMaxRank)) {
    return make_status(StatusCode::kInvalidArgument, "--shapes input '", input.name, "': rank ",
                       input.dims.size(), " exceeds ", Shape::kMaxRank);
  }
  return input;
}

std::string range_text(const DimRange& range) {
  if (range.min == range.max) return std::to_string(range.min);
  std::string text = str_cat("[", range.min, "..", range.max);
  if (range.step > 1) text += str_cat(":", range.step);
  text += ']';
  return text;
}

using NamedShapes = std::vector<std::pair<std::string, std::vector<int64_t>>>;

template <class Pick>
NamedShapes shapes_by(const ShapeProfile& profile, Pick pick) {
  NamedShapes shapes;
  for (const InputShapeRange& input : profile.inputs) {
    std::vector<int64_t> dims;
    for (const DimRange& range : input.dims) dims.push_back(pick(range));
    shapes.emplace_back(input.name, std::move(dims));
  }
  return shapes;
}

}  // namespace

Expected<ShapeProfile> ShapeProfile::parse(std::string_view text) {
  ShapeProfile profile;
  for (const std::string& entry : split_outside_brackets(text, ',')) {
    ONEPOOL_ASSIGN_OR_RETURN(InputShapeRange input, parse_entry(entry));
    ShapeProfile single;
    single.inputs.push_back(std::move(input));
    ONEPOOL_RETURN_IF_ERROR(profile.merge(single));
  }
  return profile;
}

Status ShapeProfile::merge(const ShapeProfile& other) {
  for (const InputShapeRange& input : other.inputs) {
    if (find(input.name) != nullptr) {
      return make_status(StatusCode::kInvalidArgument, "--shapes names input '", input.name,
                         "' twice");
    }
    inputs.push_back(input);
  }
  return Status::ok();
}

const InputShapeRange* ShapeProfile::find(std::string_view name) const {
  for (const InputShapeRange& input : inputs) {
    if (input.name == name) return &input;
  }
  return nullptr;
}

bool ShapeProfile::has_ranges() const {
  for (const InputShapeRange& input : inputs) {
    for (const DimRange& range : input.dims) {
      if (range.min != range.max) return true;
    }
  }
  return false;
}

NamedShapes ShapeProfile::max_shapes() const {
  return shapes_by(*this, [](const DimRange& range) { return range.max; });
}

NamedShapes ShapeProfile::min_shapes() const {
  return shapes_by(*this, [](const DimRange& range) { return range.min; });
}

NamedShapes ShapeProfile::mid_shapes() const {
  return shapes_by(*this, [](const DimRange& range) {
    const int64_t steps = (range.max - range.min) / range.step;
    return range.min + steps / 2 * range.step;
  });
}

Status ShapeProfile::check(std::string_view name, const Shape& shape) const {
  const InputShapeRange* input = find(name);
  if (input == nullptr) return Status::ok();
  if (static_cast<size_t>(shape.rank()) != input->dims.size()) {
    return make_status(StatusCode::kInvalidArgument, "input '", name, "': rank ", shape.rank(), " ",
                       shape.to_string(), " but the declared range has rank ", input->dims.size(),
                       " (profile ", to_string(), ")");
  }
  for (int axis = 0; axis < shape.rank(); ++axis) {
    const DimRange& range = input->dims[static_cast<size_t>(axis)];
    const int64_t dim = shape[axis];
    if (dim < range.min || dim > range.max) {
      return make_status(StatusCode::kOutOfRange, "input '", name, "' axis ", axis, ": ", dim,
                         " is outside the declared range ", range_text(range), " (profile ",
                         to_string(), ")");
    }
    if ((dim - range.min) % range.step != 0) {
      return make_status(StatusCode::kOutOfRange, "input '", name, "' axis ", axis, ": ", dim,
                         " is not on the declared step of ", range_text(range), " (profile ",
                         to_string(), ")");
    }
  }
  return Status::ok();
}

double ShapeProfile::element_ratio() const {
  double ratio = 1.0;
  for (const InputShapeRange& input : inputs) {
    for (const DimRange& range : input.dims) {
      ratio *= static_cast<double>(range.max) / static_cast<double>(range.min);
    }
  }
  return ratio;
}

std::string ShapeProfile::to_string() const {
  std::string text;
  for (const InputShapeRange& input : inputs) {
    if (!text.empty()) text += ',';
    text += input.name;
    text += ':';
    for (size_t axis = 0; axis < input.dims.size(); ++axis) {
      if (axis > 0) text += 'x';
      text += range_text(input.dims[axis]);
    }
  }
  return text;
}

}  // namespace onepool
