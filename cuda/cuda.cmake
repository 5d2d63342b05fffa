# The CUDA backend, target hulk_cuda (included by the top-level CMakeLists.txt when HULK_WITH_CUDA):
#   kernels/  the ops' kernels, one file per op family as in csrc/ops/cpu/, and the GCN normalisation
#   runtime/  launch, error checks, device memory and streams, cuBLAS / cuSPARSE, the SpMM path
#   simt/     the CPU simulator that replaces the CUDA runtime in the SIMT build
# Builds:
#   nvcc (HULK_CUDA=AUTO with nvcc, or ON): the .cu files compiled by nvcc, static cudart (the
#     library loads on machines without a driver), cuBLAS and cuSPARSE from the toolkit.
#   SIMT (HULK_CUDA=SIMT): the same .cu files compiled as C++17 with HULK_SIMT=1, plus simt/*.cpp;
#     no CUDA toolkit is needed.
#
# An OBJECT library whose objects are archived into hulk_core: the kernels call CPU code (the
# SIMT build's BLAS and SpMM, Csr, Tensor) and the core dispatches to the kernels (HULK_BACKEND),
# so two static libraries would need each other. As objects the backend still compiles as a
# target of its own (sources, language, definitions) and links as part of hulk_core.
file(GLOB HULK_CUDA_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/kernels/*.cu
     ${CMAKE_CURRENT_LIST_DIR}/runtime/*.cu)
add_library(hulk_cuda OBJECT ${HULK_CUDA_SOURCES})
target_include_directories(hulk_cuda PUBLIC ${PROJECT_SOURCE_DIR})
target_compile_definitions(hulk_cuda PUBLIC HULK_WITH_CUDA=1)
target_compile_options(hulk_cuda PRIVATE $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra>)

if(HULK_SIMT)
  file(GLOB HULK_SIMT_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/simt/*.cpp)
  # LANGUAGE CXX makes CMake pass -x c++ for the .cu files.
  # GCC does not know nvcc's `#pragma unroll`: not a warning worth having in every kernel file.
  set_source_files_properties(${HULK_CUDA_SOURCES} PROPERTIES LANGUAGE CXX
    COMPILE_OPTIONS $<$<CXX_COMPILER_ID:GNU,Clang>:-Wno-unknown-pragmas>)
  target_sources(hulk_cuda PRIVATE ${HULK_SIMT_SOURCES})
  target_compile_definitions(hulk_cuda PUBLIC HULK_SIMT=1)
else()
  find_package(CUDAToolkit REQUIRED)
  set_target_properties(hulk_cuda PROPERTIES CUDA_RUNTIME_LIBRARY Static)
  # Host .cpp files of the engine include <cuda_runtime.h> through cuda/runtime/compat.h.
  target_link_libraries(hulk_cuda PUBLIC CUDA::cudart_static CUDA::cublas CUDA::cusparse)
  # cuBLAS/cuSPARSE are shared libraries: find them from the Python extension and the tests.
  list(APPEND CMAKE_BUILD_RPATH ${CUDAToolkit_LIBRARY_DIR})
  list(APPEND CMAKE_INSTALL_RPATH ${CUDAToolkit_LIBRARY_DIR})
endif()

# PUBLIC: hulk_core takes the objects; its users get the definitions and the CUDA libraries.
target_link_libraries(hulk_core PUBLIC hulk_cuda)
