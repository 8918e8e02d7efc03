#include "zerograph/ir/tensor_spec.h"

#include <algorithm>
#include <numeric>

#include "zerograph/core/str_cat.h"

namespace zerograph {

std::string ShapeToString(std::span<const int64_t> shape) {
  return StrCat("[", StrJoin(shape, ","), "]");
}

StatusOr<Shape> BroadcastShapes(std::span<const int64_t> a, std::span<const int64_t> b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    ZG_RETURN_IF_NOT(da == db || da == 1 || db == 1, "shapes ", ShapeToString(a), " and ",
                     ShapeToString(b), " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

StatusOr<MatMulShapes> MatMulShapesOf(std::span<const int64_t> a, std::span<const int64_t> b) {
  ZG_RETURN_IF_NOT(!a.empty() && !b.empty(), "MatMul of a scalar: ", ShapeToString(a), " x ",
                   ShapeToString(b));
  MatMulShapes s;
  const bool a_vector = a.size() == 1;
  const bool b_vector = b.size() == 1;
  s.m = a_vector ? 1 : a[a.size() - 2];
  s.k = a.back();
  const int64_t kb = b_vector ? b[0] : b[b.size() - 2];
  s.n = b_vector ? 1 : b.back();
  ZG_RETURN_IF_NOT(s.k == kb, "MatMul inner dimensions differ: ", ShapeToString(a), " x ",
                   ShapeToString(b));
  if (!a_vector) s.a_batch.assign(a.begin(), a.end() - 2);
  if (!b_vector) s.b_batch.assign(b.begin(), b.end() - 2);
  ZG_ASSIGN_OR_RETURN(s.out_batch, BroadcastShapes(s.a_batch, s.b_batch));
  s.out = s.out_batch;
  if (!a_vector) s.out.push_back(s.m);
  if (!b_vector) s.out.push_back(s.n);
  return s;
}

StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  ZG_RETURN_IF_NOT(axis >= -rank && axis < rank, "axis ", axis, " out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

StatusOr<std::vector<bool>> ReducedAxes(std::span<const int64_t> axes, int64_t rank,
                                        bool noop_with_empty_axes) {
  std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty() && !noop_with_empty_axes);
  for (int64_t axis : axes) {
    ZG_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(axis, rank));
    ZG_RETURN_IF_NOT(!reduced[static_cast<size_t>(a)], "axis ", axis, " is listed twice");
    reduced[static_cast<size_t>(a)] = true;
  }
  return reduced;
}

StatusOr<std::vector<int64_t>> TransposePerm(const std::optional<std::vector<int64_t>>& perm,
                                             size_t rank) {
  std::vector<int64_t> out(rank);
  if (!perm) {
    std::iota(out.rbegin(), out.rend(), 0);
    return out;
  }
  ZG_RETURN_IF_NOT(perm->size() == rank, "perm ", ShapeToString(*perm), " for rank ", rank);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < rank; ++i) {
    ZG_ASSIGN_OR_RETURN(out[i], NormalizeAxis((*perm)[i], static_cast<int64_t>(rank)));
    ZG_RETURN_IF_NOT(!seen[static_cast<size_t>(out[i])], "perm ", ShapeToString(*perm),
                     " repeats an axis");
    seen[static_cast<size_t>(out[i])] = true;
  }
  return out;
}

}  // namespace zerograph
