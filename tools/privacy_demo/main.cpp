// dpstream-privacy-demo: private covariance release on a synthetic stream, under each calibration and
// noise shape, then a release the accountant refuses. The work is in tools/privacy_demo/ (demo.hpp).
#include "common/commands.hpp"

int main(int argc, char** argv) { return dpstream::tools::privacy_demo_command(argc, argv); }
