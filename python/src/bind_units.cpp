// dpstream._core._ContributionBound: stream::ContributionBound (stream/contribution_bound.hpp) for
// the Python layer, which bounds each partial_fit's rows by their user ids before they reach the guard.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/stream/contribution_bound.hpp"

namespace dpstream::python {

namespace {

// A user id as the bound's key: str as its UTF-8 bytes, bytes as they are, int as its decimal text.
// Anything else (None, a float: 1.0 and 1 would be two users) is refused naming the row.
void key_of(const py::handle& id, std::uint64_t row, std::string& key) {
  if (py::isinstance<py::bool_>(id) || !(py::isinstance<py::str>(id) || py::isinstance<py::bytes>(id) ||
                                         py::isinstance<py::int_>(id) || py::hasattr(id, "__index__")))
    throw InvalidRow(row, "user id " + py::repr(id).cast<std::string>() + " is not a str, bytes or int");
  if (py::isinstance<py::str>(id) || py::isinstance<py::bytes>(id)) key = id.cast<std::string>();
  else key = py::str(py::int_(py::reinterpret_borrow<py::object>(id))).cast<std::string>();
}

class PyContributionBound {
 public:
  PyContributionBound(std::uint32_t max_rows, std::uint64_t min_separation, std::uint64_t max_state_bytes)
      : bound_(options(max_rows, min_separation, max_state_bytes)) {}

  // The mask of the rows kept: row i of the call is the (first_row + i)-th presented (for messages);
  // a kept row goes into block (stream_rows + kept before it) / block_rows.
  py::array_t<bool> admit(const py::sequence& ids, std::uint64_t first_row, std::uint64_t stream_rows,
                          std::uint64_t block_rows) {
    if (block_rows == 0) throw InvalidParameter("block_rows must be >= 1");
    const auto n = static_cast<std::size_t>(py::len(ids));
    py::array_t<bool> mask(static_cast<py::ssize_t>(n));
    auto out = mask.mutable_unchecked<1>();
    std::string key;
    std::uint64_t kept = 0;
    for (std::size_t i = 0; i < n; ++i) {
      key_of(ids[i], first_row + i, key);
      const bool keep = bound_.admit(std::string_view(key), first_row + i, (stream_rows + kept) / block_rows);
      out(static_cast<py::ssize_t>(i)) = keep;
      kept += keep;
    }
    return mask;
  }

  py::dict counts() const {
    const stream::ContributionBoundCounts& c = bound_.counts();
    py::dict d;
    d["seen"] = c.seen, d["kept"] = c.kept, d["over_rows"] = c.over_rows, d["too_close"] = c.too_close;
    d["users"] = c.units, d["state_bytes"] = bound_.state_bytes(), d["max_state_bytes"] = bound_.max_state_bytes();
    return d;
  }

 private:
  static stream::ContributionBoundOptions options(std::uint32_t max_rows, std::uint64_t separation, std::uint64_t bytes) {
    stream::ContributionBoundOptions o;
    o.participation = {max_rows, separation};
    o.max_state_bytes = bytes;
    return o;
  }
  stream::ContributionBound bound_;
};

}  // namespace

void bind_units(py::module_& m) {
  py::class_<PyContributionBound>(m, "_ContributionBound")
      .def(py::init<std::uint32_t, std::uint64_t, std::uint64_t>(), py::arg("max_rows_per_user"),
           py::arg("min_separation") = 0, py::arg("max_state_bytes") = 0)
      .def("admit", &PyContributionBound::admit, py::arg("ids"), py::arg("first_row"), py::arg("stream_rows"),
           py::arg("block_rows"))
      .def("counts", &PyContributionBound::counts);
  m.attr("_BYTES_PER_USER") = stream::ContributionBound::kBytesPerUnit;
  m.def("_describe_unit", [](std::uint64_t k, std::uint64_t b, const std::string& unit) {
    return stream::describe_unit({k, b}, unit);
  });
}

}  // namespace dpstream::python
