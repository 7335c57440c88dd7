#include "pe/rope_form.h"

namespace pe {

std::size_t n_axes(const RopeForm& form) noexcept {
  if (form.vision != VisionRope::None) return 2;
  if (!form.axes_dim.empty()) return form.axes_dim.size();
  return form.mrope_section.empty() ? 1 : form.mrope_section.size();
}

namespace {
// The axis of an axial form's pair j and j's index within that axis's ladder.
FrequencyIndex axial_place(const RopeForm& form, std::size_t j, std::size_t& axis) noexcept {
  std::size_t first = 0;
  for (axis = 0; axis + 1 < form.axes_dim.size(); ++axis) {
    const auto pairs = static_cast<std::size_t>(form.axes_dim[axis]) / 2;
    if (j < first + pairs) break;
    first += pairs;
  }
  return {j - first, static_cast<std::size_t>(form.axes_dim[axis])};
}
}  // namespace

std::size_t axis_of_pair(const RopeForm& form, std::size_t n_pairs, std::size_t j) noexcept {
  if (form.vision != VisionRope::None) return j < n_pairs / 2 ? 0 : 1;
  if (!form.axes_dim.empty()) {
    std::size_t axis = 0;
    axial_place(form, j, axis);
    return axis;
  }
  const auto& s = form.mrope_section;
  if (s.empty()) return 0;
  const auto section = [&](std::size_t a) { return static_cast<std::size_t>(s[a]); };
  if (form.mrope_layout == MropeLayout::Ernie) return j < section(1) + section(2) ? 1 + j % 2 : 0;
  if (form.mrope_layout == MropeLayout::Interleaved) {
    if (j % 3 == 1 && j < 3 * section(1)) return 1;
    if (j % 3 == 2 && j < 3 * section(2)) return 2;
    if (s.size() == 4 && !(j % 3 == 0 && j < 3 * section(0))) return 3;
    return 0;
  }
  std::size_t end = 0;
  for (std::size_t a = 0; a < s.size(); ++a) {
    end += section(a);
    if (j < end) return a;
  }
  return s.size() - 1;
}

FrequencyIndex frequency_index(const RopeForm& form, std::size_t n_pairs, std::size_t j) noexcept {
  const std::size_t quarter = n_pairs / 2;  // D/4: pairs per vision axis
  switch (form.vision) {
    case VisionRope::Qwen2vl:
      return {j % quarter, n_pairs};
    case VisionRope::Pixtral:
      return {j < quarter ? 2 * j : 2 * (j - quarter) + 1, 2 * n_pairs};
    case VisionRope::None:
      break;
  }
  if (!form.axes_dim.empty()) {
    std::size_t axis = 0;
    return axial_place(form, j, axis);
  }
  return {j, 2 * n_pairs};
}

std::string show_list(const std::vector<std::int64_t>& v) {
  std::string s;
  for (std::int64_t x : v) {
    if (!s.empty()) s.push_back(',');
    s.append(std::to_string(x));
  }
  return s;
}

}  // namespace pe
