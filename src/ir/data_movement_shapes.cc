#include "zerograph/ir/data_movement_shapes.h"

#include <algorithm>
#include <utility>

#include "zerograph/core/num_elements.h"

namespace zerograph {

StatusOr<SliceRanges> ResolveSlice(std::span<const int64_t> shape, std::span<const int64_t> starts,
                                   std::span<const int64_t> ends,
                                   std::optional<std::span<const int64_t>> axes,
                                   std::optional<std::span<const int64_t>> steps) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  ZG_RETURN_IF_NOT(starts.size() == ends.size(), "starts has ", starts.size(), " values, ends ",
                   ends.size());
  ZG_RETURN_IF_NOT(!axes || axes->size() == starts.size(), "axes has ", axes->size(),
                   " values, starts ", starts.size());
  ZG_RETURN_IF_NOT(!steps || steps->size() == starts.size(), "steps has ", steps->size(),
                   " values, starts ", starts.size());
  SliceRanges ranges;
  ranges.start.assign(shape.size(), 0);
  ranges.step.assign(shape.size(), 1);
  ranges.out.assign(shape.begin(), shape.end());
  std::vector<bool> seen(shape.size(), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = static_cast<int64_t>(i);
    if (axes) {
      ZG_ASSIGN_OR_RETURN(axis, NormalizeAxis((*axes)[i], rank));
    }
    ZG_RETURN_IF_NOT(axis < rank, "slices ", starts.size(), " axes of a rank-", rank, " input");
    const size_t d = static_cast<size_t>(axis);
    ZG_RETURN_IF_NOT(!seen[d], "axis ", axis, " is sliced twice");
    seen[d] = true;
    const int64_t step = steps ? (*steps)[i] : 1;
    ZG_RETURN_IF_NOT(step != 0, "step 0 on axis ", axis);
    const int64_t dim = shape[d];
    auto clamp = [&](int64_t index) {
      if (index < 0) index += dim;
      return step > 0 ? std::clamp<int64_t>(index, 0, dim)
                      : std::clamp<int64_t>(index, -1, dim - 1);
    };
    // Ends beyond int64's range (INT64_MAX, INT64_MIN mean "to the end") clamp like any other.
    const int64_t start = clamp(starts[i]);
    const int64_t end = clamp(ends[i]);
    const int64_t count =
        step > 0 ? (end - start + step - 1) / step : (start - end - step - 1) / -step;
    ranges.start[d] = start;
    ranges.step[d] = step;
    ranges.out[d] = std::max<int64_t>(count, 0);
  }
  return ranges;
}

StatusOr<std::vector<int64_t>> ResolveSplit(int64_t dim, std::optional<std::vector<int64_t>> split,
                                            size_t num_outputs, bool last_may_be_smaller) {
  ZG_RETURN_IF_NOT(num_outputs > 0, "no outputs");
  if (split) {
    ZG_RETURN_IF_NOT(split->size() == num_outputs, "split has ", split->size(), " values for ",
                     num_outputs, " outputs");
    int64_t total = 0;
    for (int64_t part : *split) {
      ZG_RETURN_IF_NOT(part >= 0, "split ", ShapeToString(*split), " has a negative part");
      total += part;
    }
    ZG_RETURN_IF_NOT(total == dim, "split ", ShapeToString(*split), " sums to ", total,
                     ", not the dimension's ", dim);
    return std::move(*split);
  }
  const int64_t n = static_cast<int64_t>(num_outputs);
  if (!last_may_be_smaller) {
    ZG_RETURN_IF_NOT(dim % n == 0, "a dimension of ", dim, " does not split into ", n,
                     " equal parts");
  }
  const int64_t part = (dim + n - 1) / n;
  std::vector<int64_t> parts(num_outputs, part);
  parts.back() = dim - part * (n - 1);
  ZG_RETURN_IF_NOT(parts.back() >= 0, "a dimension of ", dim, " does not split into ", n, " parts");
  return parts;
}

StatusOr<Shape> SqueezedShape(std::span<const int64_t> shape,
                              std::optional<std::span<const int64_t>> axes) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<bool> removed(shape.size(), false);
  if (axes) {
    for (int64_t axis : *axes) {
      ZG_ASSIGN_OR_RETURN(const int64_t d, NormalizeAxis(axis, rank));
      ZG_RETURN_IF_NOT(shape[static_cast<size_t>(d)] == 1, "cannot squeeze axis ", axis, " of ",
                       ShapeToString(shape), ": its size is not 1");
      removed[static_cast<size_t>(d)] = true;
    }
  } else {
    for (size_t d = 0; d < shape.size(); ++d) removed[d] = shape[d] == 1;
  }
  Shape out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!removed[d]) out.push_back(shape[d]);
  }
  return out;
}

StatusOr<Shape> UnsqueezedShape(std::span<const int64_t> shape, std::span<const int64_t> axes) {
  const int64_t rank = static_cast<int64_t>(shape.size() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t axis : axes) {
    ZG_ASSIGN_OR_RETURN(const int64_t d, NormalizeAxis(axis, rank));
    ZG_RETURN_IF_NOT(!inserted[static_cast<size_t>(d)], "axis ", axis, " is given twice");
    inserted[static_cast<size_t>(d)] = true;
  }
  Shape out;
  size_t next = 0;
  for (bool one : inserted) out.push_back(one ? 1 : shape[next++]);
  return out;
}

AxisSplit SplitAtAxis(std::span<const int64_t> shape, size_t axis) {
  AxisSplit split;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d < axis) {
      split.outer *= shape[d];
    } else if (d == axis) {
      split.dim = shape[d];
    } else {
      split.inner *= shape[d];
    }
  }
  return split;
}

}  // namespace zerograph
