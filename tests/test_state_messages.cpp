// The save / load pairs of the states a checkpoint embeds (the stationary estimate on packed
// triangles, the nonnegative reader) and the packed-triangle layout they use: bit-for-bit round trips,
// the messages earlier versions wrote, and refusals that name the field.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>

#include <Eigen/Core>

#include "dpstream/base/errors.hpp"
#include "dpstream/linalg/packed_triangle.hpp"
#include "dpstream/pca/doubly_nonnegative.hpp"
#include "dpstream/stream/separable_noise.hpp"
#include "dpstream/stream/stationary_estimate.hpp"
#include "learner_states.pb.h"

namespace test_state_messages {

using namespace dpstream;

// A full matrix as versions before packed checkpoints wrote it (learner_states.proto's Matrix).
void put_full(const Eigen::MatrixXd& m, proto::Matrix& out) {
  out.set_rows(m.rows());
  out.set_cols(m.cols());
  out.mutable_values()->Add(m.data(), m.data() + m.size());
}

Eigen::MatrixXd random_symmetric(int seed, Eigen::Index d) {
  std::srand(static_cast<unsigned>(seed));
  const Eigen::MatrixXd g = Eigen::MatrixXd::Random(d, d);
  return g + g.transpose();  // exactly symmetric: a + b == b + a bit for bit
}

Eigen::VectorXd packed(const Eigen::MatrixXd& m) {
  Eigen::VectorXd out(m.rows() * (m.rows() + 1) / 2);
  linalg::pack_lower(m, out);
  return out;
}

TEST_CASE("pack_lower / unpack_lower: the lower triangle column by column, back bit for bit; bad sizes refused") {
  const Eigen::MatrixXd m = random_symmetric(7, 5);
  const Eigen::VectorXd p = packed(m);
  CHECK(p.size() == 15);
  CHECK(p(1) == m(1, 0));
  CHECK(p(5) == m(1, 1));  // column 1 starts after column 0's 5 values
  Eigen::MatrixXd back;
  linalg::unpack_lower(p, back);
  CHECK(back == m);
  linalg::unpack_lower(2.0 * p, back);  // an expression, as the stationary estimate's prefix is
  CHECK(back == 2.0 * m);
  Eigen::VectorXd short_out(14);
  CHECK_THROWS_AS(linalg::pack_lower(m, short_out), InvalidParameter);
  CHECK_THROWS_AS(linalg::unpack_lower(short_out, back), InvalidParameter);
  for (Eigen::Index d = 0; d <= 300; ++d) CHECK(linalg::packed_side(d * (d + 1) / 2, "test") == d);
  CHECK_THROWS_AS(linalg::packed_side(-1, "test"), InvalidParameter);  // checked before its square root
  CHECK_THROWS_AS(linalg::packed_side(14, "test"), InvalidParameter);
}

TEST_CASE("the stationary estimate on packed releases is the full one's, bit for bit") {
  const stream::SeparableStrategy s = stream::SeparableStrategy::optimize(8);
  stream::StationaryEstimate<Eigen::MatrixXd> full(s);
  stream::StationaryEstimate<Eigen::VectorXd> half(s);
  Eigen::MatrixXd unpacked;
  for (std::uint64_t t = 1; t <= 8; ++t) {
    const Eigen::MatrixXd release = random_symmetric(static_cast<int>(t), 7);
    full.add(t, release);
    half.add(t, packed(release));
    linalg::unpack_lower(half.prefix(), unpacked);
    CHECK(unpacked == Eigen::MatrixXd(full.prefix()));
  }
}

TEST_CASE("the stationary estimate's checkpoint: packed sums as they are; an earlier version's full matrices packed") {
  using State = stream::StationaryEstimate<Eigen::VectorXd>::State;
  const State state{.steps = 3,
                    .weighted_increments = packed(random_symmetric(1, 6)),
                    .previous_release = packed(random_symmetric(2, 6)),
                    .numerator = packed(random_symmetric(3, 6)),
                    .denominator = 2.5};
  const auto same = [](const State& a, const State& b) {
    return a.steps == b.steps && a.weighted_increments == b.weighted_increments &&
           a.previous_release == b.previous_release && a.numerator == b.numerator && a.denominator == b.denominator;
  };

  proto::StationaryEstimate written;
  state.save(written);
  CHECK(written.packed_numerator().size() == 6);
  CHECK(written.packed_numerator().lower_size() == 21);  // 6·7/2 values, not 36
  CHECK(written.numerator().values_size() == 0);
  CHECK(same(State::load(written, "stationary"), state));  // bit for bit

  // What versions before packed checkpoints wrote: the full matrices in fields 2-4.
  proto::StationaryEstimate earlier;
  earlier.set_steps(state.steps);
  put_full(random_symmetric(1, 6), *earlier.mutable_weighted_increments());
  put_full(random_symmetric(2, 6), *earlier.mutable_previous_release());
  put_full(random_symmetric(3, 6), *earlier.mutable_numerator());
  earlier.set_denominator(state.denominator);
  CHECK(same(State::load(earlier, "stationary"), state));
  CHECK(written.ByteSizeLong() < 0.65 * static_cast<double>(earlier.ByteSizeLong()));

  // A full matrix that is not exactly symmetric cannot be packed: refused, not half read.
  earlier.mutable_numerator()->set_values(1, earlier.numerator().values(1) + 1e-12);
  CHECK_THROWS_AS(State::load(earlier, "stationary"), CorruptInput);
  CHECK_THROWS_WITH(State::load(earlier, "stationary"),
                    Catch::Contains("stationary.numerator") && Catch::Contains("not exactly symmetric"));

  written.mutable_packed_numerator()->mutable_lower()->RemoveLast();
  CHECK_THROWS_AS(State::load(written, "stationary"), CorruptInput);
  CHECK_THROWS_WITH(State::load(written, "stationary"),
                    Catch::Contains("stationary.numerator") && Catch::Contains("20 values"));

  State not_packed = state;
  not_packed.numerator = Eigen::VectorXd::Ones(5);  // no d(d+1)/2
  proto::StationaryEstimate refused;
  CHECK_THROWS_WITH(not_packed.save(refused), Catch::Contains("numerator") && Catch::Contains("5 values"));
}

TEST_CASE("the nonnegative reader's checkpoint: counts and the packed correction, bit for bit; a short one refused") {
  using State = pca::DoublyNonnegativeReader::State;
  std::srand(4u);
  const Eigen::MatrixXd g = Eigen::MatrixXd::Random(5, 5);
  const State state{.releases = 9, .full_solves = 6, .last_full = 8, .correction = g + g.transpose()};
  const Eigen::MatrixXd& n = state.correction;
  REQUIRE(n == n.transpose());  // as the reader's N is: exactly symmetric
  proto::DoublyNonnegativeReader written;
  state.save(written);
  CHECK(written.correction().lower_size() == 15);  // 5·6/2
  const State read = State::load(written, "nonnegative");
  CHECK(read.releases == 9);
  CHECK(read.full_solves == 6);
  CHECK(read.last_full == 8);
  CHECK(read.correction == state.correction);
  written.mutable_correction()->mutable_lower()->RemoveLast();
  CHECK_THROWS_WITH(State::load(written, "nonnegative"),
                    Catch::Contains("nonnegative.correction") && Catch::Contains("14 values"));
  // Not exactly symmetric: refused when written (the reader never makes one).
  State skewed = state;
  skewed.correction(0, 1) += 1e-12;
  proto::DoublyNonnegativeReader refused;
  CHECK_THROWS_AS(skewed.save(refused), InvalidParameter);
}

}  // namespace test_state_messages
