// dpstream-convert: converts stored rows between IDX, CSV and protobuf row logs, streaming. The work
// is in tools/convert/ (convert.hpp).
#include "common/commands.hpp"

int main(int argc, char** argv) { return dpstream::tools::convert_command(argc, argv); }
