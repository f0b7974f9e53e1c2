// A checkpoint's record of the PrivacySpec its writer was built with. The continual sum's, streaming
// Oja's and streaming PCA's messages each hold the same five fields (row_norm_bound, relation,
// epsilon, delta, calibration) and, the first two, the noise source (seeded, source.seed): one
// writer and one comparison serve them all. A restore compares before it reads any state, so a
// checkpoint made with another spec is refused naming the first field that differs.
#pragma once

#include <string>

#include "dpstream/base/format.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/privacy/privacy_spec.hpp"

namespace dpstream::privacy {

template <class Message>
void put_spec(const PrivacySpec& spec, Message& msg) {
  msg.set_row_norm_bound(spec.row_norm_bound);
  msg.set_relation(to_string(spec.relation));
  msg.set_epsilon(spec.target.epsilon());
  msg.set_delta(spec.target.delta());
  msg.set_calibration(to_string(spec.calibration));
}

// Calls expect(field, saved, given) for the five fields in that order; `saved_relation` is the
// message's relation as its reader interprets it (a stream maps checkpoints from before the field).
template <class Message, class Expect>
void expect_spec(const Message& msg, const std::string& saved_relation, const PrivacySpec& spec, Expect&& expect) {
  using base::format_value;
  expect("row_norm_bound", format_value(msg.row_norm_bound()), format_value(spec.row_norm_bound));
  expect("relation", saved_relation, to_string(spec.relation));
  expect("epsilon", format_value(msg.epsilon()), format_value(spec.target.epsilon()));
  expect("delta", format_value(msg.delta()), format_value(spec.target.delta()));
  expect("calibration", msg.calibration(), to_string(spec.calibration));
}

// The noise source: seeded or secure, then the seed.
template <class Message, class Expect>
void expect_noise(const Message& msg, const NoiseSpec& noise, Expect&& expect) {
  expect("noise source", msg.seeded() ? "seeded" : "secure", noise.seed ? "seeded" : "secure");
  if (msg.seeded()) expect("seed", std::to_string(msg.source().seed()), std::to_string(*noise.seed));
}

}  // namespace dpstream::privacy
