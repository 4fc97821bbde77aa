# SPDX-License-Identifier: Apache-2.0
# HDF5 for the hdf5 module: the parallel (MPI-IO) library when MPI is on, so
# that export-hdf5 writes from every rank; the serial one otherwise.
#
# Distributions install both flavours side by side (Debian: libhdf5-dev and
# libhdf5-openmpi-dev), and which one a plain find_package(HDF5) or hdf5.pc
# picks depends on an alternatives link, i.e. on what was installed last. So
# the flavour is chosen here by its compiler wrapper (h5pcc / h5cc), and what
# was found is read back from H5pubconf.h (H5_HAVE_PARALLEL), not assumed.
#
# In:  SEDPACK_WITH_HDF5, SEDPACK_HAVE_MPI, SEDPACK_HDF5_SERIAL.
# Out: SEDPACK_HAVE_HDF5, SEDPACK_HDF5_PARALLEL (parallel library and MPI on),
#      target HDF5::HDF5.
option(SEDPACK_HDF5_SERIAL "Use the serial HDF5 library even when MPI is on (export-hdf5 then writes from rank 0)" OFF)

set(SEDPACK_HAVE_HDF5 OFF)
set(SEDPACK_HDF5_PARALLEL OFF)

# Whether the HDF5 compiler wrapper `wrapper` belongs to a parallel build.
function(sedpack_hdf5_wrapper_parallel wrapper out)
  execute_process(COMMAND "${wrapper}" -showconfig OUTPUT_VARIABLE _cfg ERROR_QUIET RESULT_VARIABLE _rc)
  set(_par "")
  if(_rc EQUAL 0 AND _cfg MATCHES "Parallel HDF5: yes")
    set(_par ON)
  elseif(_rc EQUAL 0 AND _cfg MATCHES "Parallel HDF5: no")
    set(_par OFF)
  endif()
  set(${out} "${_par}" PARENT_SCOPE)
endfunction()

if(NOT SEDPACK_WITH_HDF5 STREQUAL "OFF")
  set(_want_parallel OFF)
  if(SEDPACK_HAVE_MPI AND NOT SEDPACK_HDF5_SERIAL)
    set(_want_parallel ON)
  endif()
  # A tree configured before with the other flavour (MPI or SEDPACK_HDF5_SERIAL
  # switched since) forgets every HDF5 result, or FindHDF5 keeps the old library.
  if(HDF5_C_COMPILER_EXECUTABLE)
    sedpack_hdf5_wrapper_parallel("${HDF5_C_COMPILER_EXECUTABLE}" _cached_parallel)
    if(NOT _cached_parallel STREQUAL "" AND NOT _cached_parallel STREQUAL _want_parallel)
      message(STATUS "sedpack: switching HDF5 flavour (parallel=${_want_parallel}); forgetting ${HDF5_C_COMPILER_EXECUTABLE}")
      get_cmake_property(_cache_vars CACHE_VARIABLES)
      foreach(_v IN LISTS _cache_vars)
        if(_v MATCHES "^HDF5_" AND NOT _v STREQUAL "HDF5_ROOT")
          unset(${_v} CACHE)
        endif()
      endforeach()
    endif()
  endif()
  if(NOT HDF5_C_COMPILER_EXECUTABLE)
    if(_want_parallel)
      set(_wrappers h5pcc h5pcc.openmpi h5pcc.mpich)
    else()
      set(_wrappers h5cc h5cc.serial)
    endif()
    foreach(_w IN LISTS _wrappers)
      find_program(_sedpack_h5wrapper NAMES ${_w} NO_CACHE)
      if(_sedpack_h5wrapper)
        sedpack_hdf5_wrapper_parallel("${_sedpack_h5wrapper}" _wrapper_parallel)
        if(_wrapper_parallel STREQUAL _want_parallel)
          set(HDF5_C_COMPILER_EXECUTABLE "${_sedpack_h5wrapper}" CACHE FILEPATH "HDF5 C compiler wrapper")
          break()
        endif()
      endif()
      unset(_sedpack_h5wrapper)
    endforeach()
  endif()
  set(HDF5_PREFER_PARALLEL ${_want_parallel})
  set(_hdf5_required "")
  if(SEDPACK_WITH_HDF5 STREQUAL "ON")
    set(_hdf5_required REQUIRED)
  endif()
  find_package(HDF5 ${_hdf5_required} COMPONENTS C)
  if(HDF5_FOUND)
    set(SEDPACK_HAVE_HDF5 ON)
    set(_found_parallel OFF)
    foreach(_dir IN LISTS HDF5_C_INCLUDE_DIRS HDF5_INCLUDE_DIRS)
      if(EXISTS "${_dir}/H5pubconf.h")
        file(STRINGS "${_dir}/H5pubconf.h" _par REGEX "^#define H5_HAVE_PARALLEL 1")
        if(_par)
          set(_found_parallel ON)
        endif()
        break()
      endif()
    endforeach()
    if(_found_parallel AND SEDPACK_HAVE_MPI)
      set(SEDPACK_HDF5_PARALLEL ON)
      # Parallel <hdf5.h> includes <mpi.h>, which the wrapper's flags leave to
      # mpicc: whoever uses HDF5 gets MPI's include path and library along.
      set_property(TARGET HDF5::HDF5 APPEND PROPERTY INTERFACE_LINK_LIBRARIES MPI::MPI_CXX)
    elseif(_found_parallel)
      # Only a parallel library was found, in a build without MPI: usable
      # (serial drivers only) if its <mpi.h> is on the include path.
      message(STATUS "sedpack: only a parallel HDF5 found, MPI is off; HDF5 files are written by one process")
    elseif(_want_parallel)
      message(STATUS "sedpack: no parallel HDF5 found (install libhdf5-openmpi-dev); export-hdf5 writes from rank 0")
    endif()
    message(STATUS "sedpack: HDF5 ${HDF5_VERSION} (parallel=${_found_parallel}) from ${HDF5_C_COMPILER_EXECUTABLE}")
  endif()
endif()
