// Errors, the accountant, and the helpers every binding shares (arguments, guarded blocks).
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/symmetric_gaussian.hpp"
#include "dpstream/stream/row_normalization.hpp"

namespace dpstream::python {

namespace {

PyObject* new_error(py::module_& m, const char* name, py::tuple bases, const char* doc) {
  const std::string qualified = std::string("dpstream.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (type == nullptr) throw py::error_already_set();
  m.add_object(name, py::handle(type));
  return type;
}

// Raises `type` with the C++ message; InvalidRow also carries row_index and reason (what was wrong,
// without "row N: ", a file or a line).
void raise(PyObject* type, const char* message, const RowReason* row = nullptr) {
  py::object error = py::reinterpret_steal<py::object>(PyObject_CallFunction(type, "s", message));
  if (!error) return;  // the call set a Python error already
  if (row) error.attr("row_index") = row->row_index, error.attr("reason") = row->reason;
  PyErr_SetObject(type, error.ptr());
}

}  // namespace

void bind_errors(py::module_& m) {
  py::handle value_error(PyExc_ValueError), runtime_error(PyExc_RuntimeError);
  PyObject* base = new_error(m, "DpstreamError", py::make_tuple(py::handle(PyExc_Exception)),
                             "Base of every dpstream error; the message is the C++ library's.");
  py::handle b(base);
  static PyObject* invalid_parameter = new_error(m, "InvalidParameter", py::make_tuple(value_error, b),
      "A parameter outside its domain (epsilon <= 0, delta >= 1, an unknown name, a bad aggregate). "
      "Raised before any noise is drawn or budget spent.");
  static PyObject* invalid_row = new_error(m, "InvalidRow", py::make_tuple(value_error, b),
      "A row refused by RowGuard or a stream (wrong dimension, NaN/Inf naming the column, a norm over the "
      "bound under reject); row_index is its index in the stream, reason what was wrong (without "
      "'row N: ', a file or a line). The stream is unchanged.");
  static PyObject* corrupt_input = new_error(m, "CorruptInput", py::make_tuple(value_error, b),
      "Serialized state (checkpoint, ledger, aggregate) is corrupt or was made with other parameters.");
  static PyObject* budget_exhausted = new_error(m, "BudgetExhausted", py::make_tuple(runtime_error, b),
      "A charge would exceed the accountant's budget, or rows past a fixed horizon. Nothing was released.");
  static PyObject* resource_limit = new_error(m, "ResourceLimit", py::make_tuple(py::handle(PyExc_MemoryError), b),
      "An object would need more memory than dpstream's limit (80% of the machine's, or set_memory_limit); "
      "raised before anything is allocated or charged, naming the dimension, the bytes and the limit.");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InvalidRow& e) {
      const RowReason row{e.row_index(), e.reason()};
      raise(invalid_row, e.what(), &row);
    } catch (const InvalidParameter& e) {
      raise(invalid_parameter, e.what());
    } catch (const CorruptInput& e) {
      raise(corrupt_input, e.what());
    } catch (const BudgetExhausted& e) {
      raise(budget_exhausted, e.what());
    } catch (const ResourceLimit& e) {
      raise(resource_limit, e.what());
    }
  });
}

void require_guard_policy(const stream::BlockAggregate& part, const stream::RowGuardOptions& guard) {
  if (part.guard.over_norm != guard.over_norm || part.guard.scaling != guard.scaling ||
      part.guard.nonnegative != guard.nonnegative)
    throw InvalidParameter("aggregate of rows [" + std::to_string(part.first_row) + ", " +
                           std::to_string(part.end_row()) + "): guarded with another policy than this stream's");
}

py::dict counts_dict(const stream::RowGuardCounts& c) {
  py::dict d;
  d["seen"] = c.seen, d["accepted"] = c.accepted, d["clipped"] = c.clipped, d["rejected"] = c.rejected;
  d["zero"] = c.zero;
  return d;
}

namespace {

// Python's relation names ('zero_out', 'replace', 'add_remove'), or the C++ ones.
privacy::Neighbours python_relation(const std::string& relation) {
  return privacy::parse_neighbours(relation == "zero_out"     ? "zero_out_row"
                                   : relation == "add_remove" ? "add_remove_row"
                                   : relation == "replace"    ? "replace_row"
                                                              : relation);
}

}  // namespace

stream::ContinualSumOptions StreamArgs::options() const {
  stream::ContinualSumOptions o;
  o.strategy = stream::parse_noise_strategy(mechanism);
  o.horizon = horizon.value_or(0);
  o.block_rows = block;
  o.privacy.target = privacy::EpsDelta(epsilon, delta);
  o.privacy.calibration = privacy::parse_calibration(calibration);
  o.privacy.relation = python_relation(relation);
  o.privacy.row_norm_bound = row_norm_bound();
  o.shape = privacy::parse_symmetric_noise_shape(noise_shape);
  o.privacy.noise.seed = seed;
  o.journal = journal;
  if (max_rows_per_user != 0) o.participation = {max_rows_per_user, min_separation};  // 0: row level
  return o;
}

stream::RowGuardOptions StreamArgs::guard() const {
  if (normalize != "unit" && normalize != "clip" && normalize != "none")
    throw InvalidParameter("normalize '" + normalize + "': expected unit, clip or none");
  const stream::RowNormalization normalization{normalize, clip_norm, normalize != "unit"};
  normalization.validate();  // InvalidParameter naming a bad clip_norm
  return normalization.guard_options(dim, nonnegative);
}

StreamArgs stream_args(const py::kwargs& kw) {
  StreamArgs a;
  auto take = [&](const char* key, auto& into) {
    if (kw.contains(key) && !kw[key].is_none()) into = kw[key].cast<std::remove_reference_t<decltype(into)>>();
  };
  take("dim", a.dim), take("epsilon", a.epsilon), take("delta", a.delta), take("block", a.block);
  take("mechanism", a.mechanism), take("noise_shape", a.noise_shape), take("normalize", a.normalize);
  take("relation", a.relation), take("calibration", a.calibration), take("clip_norm", a.clip_norm);
  take("nonnegative", a.nonnegative), take("journal", a.journal);
  take("max_rows_per_user", a.max_rows_per_user), take("min_separation", a.min_separation);
  if (kw.contains("horizon") && !kw["horizon"].is_none()) a.horizon = kw["horizon"].cast<std::uint64_t>();
  if (kw.contains("seed") && !kw["seed"].is_none()) a.seed = kw["seed"].cast<std::uint64_t>();
  return a;
}

Eigen::MatrixXd guard_block(const RowArray& rows, stream::RowGuard& guard) {
  if (rows.ndim() != 2)
    throw InvalidRow(guard.next_row_index(), "expected a 2-d array of rows (n, d), got " +
                                                 std::to_string(rows.ndim()) + " dimensions");
  const auto view = rows.unchecked<2>();
  const Eigen::Index n = view.shape(0), d = view.shape(1);
  if (d != guard.options().dimension)
    throw InvalidRow(guard.next_row_index(), "block of dimension " + std::to_string(d) + ", expected " +
                                                 std::to_string(guard.options().dimension));
  Eigen::MatrixXd block(n, d);
  stream::RowGuard trial = guard;  // committed only if every row passes
  {
    py::gil_scoped_release unlocked;
    Eigen::VectorXd row(d);  // our own VectorXd: unit scaling's bits do not depend on the caller's layout
    for (Eigen::Index i = 0; i < n; ++i) {
      for (Eigen::Index j = 0; j < d; ++j) row(j) = view(i, j);
      trial.admit(row);
      block.row(i) = row.transpose();
    }
  }
  guard = trial;
  return block;
}

void bind_privacy(py::module_& m) {
  m.def("_describe_neighbours", [](const std::string& relation) { return privacy::describe(python_relation(relation)); },
        "The neighbouring relation in words (privacy::describe), from its Python or C++ name.");
  m.def("_describe_budget", [](const privacy::PrivacyAccountant& accountant) { return privacy::describe_budget(&accountant, ""); },
        "An accountant's budget in the library's words (privacy::Budget::describe).");
  py::class_<privacy::PrivacyAccountant, SharedAccountant>(m, "_Accountant")
      .def(py::init([](double epsilon, double delta, const std::string& conversion) {
             return std::make_shared<privacy::PrivacyAccountant>(privacy::EpsDelta(epsilon, delta),
                                                                 privacy::parse_zcdp_conversion(conversion));
           }),
           py::arg("epsilon"), py::arg("delta"), py::arg("conversion") = "cks2020")
      .def("spent", [](const privacy::PrivacyAccountant& a) {
        const privacy::Spent s = a.spent();
        py::dict d;
        d["epsilon"] = s.epsilon, d["delta"] = s.delta, d["basic_epsilon"] = s.basic_epsilon;
        d["basic_delta"] = s.basic_delta, d["zcdp_epsilon"] = s.zcdp_epsilon, d["rho"] = s.rho;
        d["gdp_epsilon"] = s.gdp_epsilon;
        return d;
      })
      .def("remaining_epsilon", &privacy::PrivacyAccountant::remaining_epsilon)
      .def("budget", [](const privacy::PrivacyAccountant& a) {
        return py::make_tuple(a.budget().epsilon(), a.budget().delta());
      })
      .def("ledger", [](const privacy::PrivacyAccountant& a) {
        py::list out;
        for (const privacy::Charge& c : a.ledger()) {
          py::dict d;
          d["label"] = c.label, d["epsilon"] = c.epsilon, d["delta"] = c.delta;
          d["rho"] = c.rho ? py::object(py::float_(*c.rho)) : py::object(py::none());
          d["gaussian"] = c.gaussian;
          out.append(d);
        }
        return out;
      })
      .def("serialize", [](const privacy::PrivacyAccountant& a) { return py::bytes(a.save()); })
      .def("restore", [](privacy::PrivacyAccountant& a, const py::bytes& b) { a.restore(std::string(b)); })
      .def_static("deserialize", [](const py::bytes& b) {
        return std::make_shared<privacy::PrivacyAccountant>(privacy::PrivacyAccountant::load(std::string(b)));
      });
}

}  // namespace dpstream::python
