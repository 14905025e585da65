# Compile settings shared by the LieMBS host and every plugin (in tree and out of tree).
# A plugin that differs in the C++ standard, the instruction set or Eigen's alignment
# would corrupt Eigen objects crossing the library boundary; the ABI fingerprint
# (liembs/plugin/abi.hpp) catches such a plugin at load time.
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
set(CMAKE_CXX_VISIBILITY_PRESET hidden)
set(CMAKE_VISIBILITY_INLINES_HIDDEN ON)
