#include "dpstream/pca/private_pca_method.hpp"

#include <algorithm>
#include <memory>

#include "dpstream/base/errors.hpp"
#include "dpstream/pca/find_and_project.hpp"
#include "dpstream/pca/gaussian_pca.hpp"
#include "dpstream/pca/input_perturbation.hpp"
#include "dpstream/pca/noisy_power_method.hpp"
#include "dpstream/pca/private_oja.hpp"
#include "dpstream/pca/streaming_private_oja.hpp"
#include "dpstream/privacy/noise_source.hpp"

namespace dpstream::pca {

using Eigen::Index;

namespace {

// streaming-oja is a stream over minibatch slots (zero-out); the others release a function of the
// set of rows (pfp/rr: MatrixNeighbours::add_remove_row, the same relation). The spec must state it.
privacy::Neighbours method_relation(const PrivatePcaMethodOptions& s) {
  const privacy::Neighbours relation = private_pca_relation(s.method);
  if (s.privacy.relation != relation)
    throw InvalidParameter("private PCA: " + s.method + "'s guarantee is for relation " + privacy::to_string(relation) +
                           " (" + privacy::describe(relation) + "), privacy.relation is " +
                           privacy::to_string(s.privacy.relation));
  return relation;
}

// streaming-oja's options from the method's: the derived geometric plan (streaming_oja_plan.hpp), or,
// with a learning rate, the Oja step on fixed minibatches (--batch, else n/32).
StreamingPrivateOjaOptions streaming_oja_options(const PrivatePcaMethodOptions& s) {
  StreamingPrivateOjaOptions o;
  o.k = s.k;
  o.privacy = s.privacy;
  o.privacy.relation = method_relation(s);
  if (s.learning_rate > 0) {
    o.learning_rate = s.learning_rate;
    o.step_rule = StepRule::oja;
    o.batch_growth = 1.0;
  }
  o.batch_rows = s.batch;  // 0: derived
  return o;
}

// The methods that draw their own noise (from options.seed).
using Release = std::function<PrivateSubspace(const Eigen::MatrixXd&, const privacy::Budget&)>;

Release own_noise_method(const PrivatePcaMethodOptions& s, Index d) {
  if (s.method == "gauss") {
    GaussianPcaOptions o;
    o.k = s.k;
    o.mechanism.privacy = s.privacy;
    o.mechanism.privacy.relation = method_relation(s);
    o.max_rows_per_unit = s.max_rows_per_unit;
    auto m = std::make_shared<GaussianPca>(d, o);
    return [m](const Eigen::MatrixXd& rows, const privacy::Budget& a) { return m->release(rows, a).subspace; };
  }
  if (s.method == "power") {
    NoisyPowerMethodOptions o;
    o.k = s.k;
    o.iterations = s.iterations;
    o.privacy = s.privacy;
    o.privacy.relation = method_relation(s);
    o.max_rows_per_unit = s.max_rows_per_unit;
    auto m = std::make_shared<NoisyPowerMethod>(d, o);
    return [m](const Eigen::MatrixXd& rows, const privacy::Budget& a) { return m->run(rows, a); };
  }
  if (s.method == "streaming-oja") {
    // One pass, each row once, in the file's order; the budget is the pass's (parallel composition).
    StreamingPrivateOjaOptions o = streaming_oja_options(s);
    const StreamingPrivateOja probe(d, o, privacy::Budget::unaccounted("a probe: the options checked, nothing released"));  // the options checked before any row is read
    return [o, d](const Eigen::MatrixXd& rows, const privacy::Budget& a) mutable {
      o.horizon = static_cast<std::uint64_t>(rows.rows());  // every row is held: the horizon is known
      if (o.step_rule == StepRule::oja && o.batch_rows == 0) o.batch_rows = std::max<std::uint64_t>(1, o.horizon / 32);
      StreamingPrivateOja oja(d, o, a);
      for (Index i = 0; i < rows.rows(); ++i) oja.update(rows.row(i).transpose());
      oja.flush();
      return oja.current();
    };
  }
  // oja: Algorithm 2 releases the top vector; k > 1 by deflation (PrivateOjaOptions::components).
  PrivateOjaOptions o;
  o.components = s.k;
  o.iterations = s.iterations_given ? s.iterations : 100;
  o.privacy = s.privacy;
  o.privacy.relation = method_relation(s);
  auto m = std::make_shared<PrivateOja>(o);
  const bool one = s.k == 1;
  return [m, one](const Eigen::MatrixXd& rows, const privacy::Budget& a) {
    return one ? m->run(rows, a).to_subspace() : m->run_components(rows, a);
  };
}

// pfp / rr: HR12's row unit for records (a row added or removed, ‖a‖ ≤ L); the noise is the tool's.
Release shared_noise_method(const PrivatePcaMethodOptions& s) {
  std::shared_ptr<privacy::NoiseSource> noise = s.privacy.noise.make_source();
  privacy::PrivacySpec spec = s.privacy;  // the noise is drawn here, from the method's seed
  spec.noise = {};
  spec.relation = method_relation(s);
  if (s.method == "pfp") {
    FindAndProjectOptions o;
    o.k = s.k;
    o.oversampling = 2;
    o.privacy = spec;
    o.relation = MatrixNeighbours::add_remove_row;
    auto m = std::make_shared<PrivateFindAndProject>(o);
    return [m, noise](const Eigen::MatrixXd& rows, const privacy::Budget& a) { return m->release(rows, *noise, a).subspace; };
  }
  InputPerturbationOptions o;  // rr
  o.k = s.k;
  o.privacy = spec;
  o.relation = MatrixNeighbours::add_remove_row;
  auto m = std::make_shared<InputPerturbation>(o);
  return [m, noise](const Eigen::MatrixXd& rows, const privacy::Budget& a) { return m->release(rows, *noise, a).subspace; };
}

}  // namespace

privacy::Neighbours private_pca_relation(const std::string& method) {
  return method == "streaming-oja" ? privacy::Neighbours::zero_out_row : privacy::Neighbours::add_remove_row;
}

const char* private_pca_method_names() { return "gauss, power, oja, streaming-oja, pfp, rr"; }

PrivatePcaMethod::PrivatePcaMethod(const PrivatePcaMethodOptions& o, Index dimension)
    : relation_(method_relation(o)), options_(o), dimension_(dimension) {
  if (o.max_rows_per_unit != 0 && o.method != "gauss" && o.method != "power")
    throw InvalidParameter("private PCA: a unit-level bound (max_rows_per_unit) is implemented for gauss and power, "
                           "not " + o.method);
  if (o.method == "pfp" || o.method == "rr") {
    release_ = shared_noise_method(o);
  } else if (o.method == "gauss" || o.method == "power" || o.method == "oja" || o.method == "streaming-oja") {
    release_ = own_noise_method(o, dimension);
  } else {
    throw InvalidParameter("private PCA: unknown method '" + o.method + "' (" + private_pca_method_names() + ")");
  }
}

std::optional<ResolvableGap> PrivatePcaMethod::one_pass_reach(std::uint64_t rows) const {
  if (options_.method != "streaming-oja") return std::nullopt;
  const StreamingPrivateOjaOptions o = streaming_oja_options(options_);
  const StreamingPrivateOja probe(dimension_, o, privacy::Budget::unaccounted("a probe of the noise scale, nothing released"));
  constexpr double kTolerance = 0.3;  // tan θ ≤ 0.3 per direction: sin²θ ≤ 0.083
  // With the private clip scale (the default) this is the worst case, the clip staying at L².
  return resolvable_gap(rows, dimension_, probe.unit_sigma(), o.batch_growth, kTolerance, probe.scale_share());
}

PrivateSubspace PrivatePcaMethod::release(const Eigen::MatrixXd& rows, const privacy::Budget& budget) const {
  return release_(rows, budget);
}

}  // namespace dpstream::pca
