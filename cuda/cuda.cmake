# CUDA backend sources (included by the top-level CMakeLists.txt when HULK_WITH_CUDA).
#   nvcc (HULK_CUDA=AUTO with nvcc, or ON): cuda/*.cu compiled by nvcc, static cudart (the
#     library loads on machines without a driver), cuBLAS and cuSPARSE from the toolkit.
#   SIMT (HULK_CUDA=SIMT): the same cuda/*.cu compiled as C++17 with HULK_SIMT=1, plus the
#     simulator (cuda/simt/*.cpp); no CUDA toolkit is needed.
file(GLOB HULK_CUDA_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cu)
target_compile_definitions(hulk_core PUBLIC HULK_WITH_CUDA=1)

if(HULK_SIMT)
  file(GLOB HULK_SIMT_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/simt/*.cpp)
  # LANGUAGE CXX makes CMake pass -x c++ for the .cu files.
  # GCC does not know nvcc's `#pragma unroll`: not a warning worth having in every kernel file.
  set_source_files_properties(${HULK_CUDA_SOURCES} PROPERTIES LANGUAGE CXX
    COMPILE_OPTIONS $<$<CXX_COMPILER_ID:GNU,Clang>:-Wno-unknown-pragmas>)
  target_sources(hulk_core PRIVATE ${HULK_CUDA_SOURCES} ${HULK_SIMT_SOURCES})
  target_compile_definitions(hulk_core PUBLIC HULK_SIMT=1)
else()
  find_package(CUDAToolkit REQUIRED)
  target_sources(hulk_core PRIVATE ${HULK_CUDA_SOURCES})
  set_target_properties(hulk_core PROPERTIES CUDA_RUNTIME_LIBRARY Static)
  # Host .cpp files of the engine include <cuda_runtime.h> through cuda/compat.h.
  target_link_libraries(hulk_core PUBLIC CUDA::cudart_static CUDA::cublas CUDA::cusparse)
  # cuBLAS/cuSPARSE are shared libraries: find them from the Python extension and the tests.
  list(APPEND CMAKE_BUILD_RPATH ${CUDAToolkit_LIBRARY_DIR})
  list(APPEND CMAKE_INSTALL_RPATH ${CUDAToolkit_LIBRARY_DIR})
endif()
