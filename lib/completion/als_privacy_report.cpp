#include "dpstream/completion/als_privacy_report.hpp"

#include "dpstream/base/errors.hpp"
#include "dpstream/base/text.hpp"

namespace dpstream::completion {

const char* to_string(AlsMechanism mechanism) noexcept {
  switch (mechanism) {
    case AlsMechanism::none: return "none";
    case AlsMechanism::gaussian: return "gaussian";
    case AlsMechanism::laplace: return "laplace";
    case AlsMechanism::huber: return "huber";
  }
  return "?";
}

const char* to_string(AlsMode mode) noexcept {
  switch (mode) {
    case AlsMode::faithful: return "faithful";
    case AlsMode::rigorous: return "rigorous";
  }
  return "?";
}

AlsMechanism parse_als_mechanism(const std::string& text) {
  for (AlsMechanism m : {AlsMechanism::none, AlsMechanism::gaussian, AlsMechanism::laplace, AlsMechanism::huber})
    if (text == to_string(m)) return m;
  throw InvalidParameter("ALS mechanism must be none, gaussian, laplace or huber, got '" + base::printable(text) + "'");
}

AlsMode parse_als_mode(const std::string& text) {
  for (AlsMode m : {AlsMode::faithful, AlsMode::rigorous})
    if (text == to_string(m)) return m;
  throw InvalidParameter("ALS mode must be faithful or rigorous, got '" + base::printable(text) + "'");
}

}  // namespace dpstream::completion
