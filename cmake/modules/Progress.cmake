# Build progress: ninja's [done/total] lines drawn as a bar with the time left, by making
# cmake/ninja_progress.py (a filter around the real ninja) CMake's make program. It applies to
# `cmake --build` however it is started: `pip install ./ -v`, the project's build command, by hand.
# Include before project(); TVM_WHEELS_PROGRESS=OFF keeps ninja's own output.
option(TVM_WHEELS_PROGRESS "draw the build's progress as a bar with the time left" ON)

function(tvm_wheels_progress_bar)
  if(NOT TVM_WHEELS_PROGRESS OR NOT CMAKE_GENERATOR MATCHES "Ninja" OR CMAKE_MAKE_PROGRAM MATCHES "ninja-progress$")
    return()
  endif()
  if(CMAKE_MAKE_PROGRAM)
    set(_ninja "${CMAKE_MAKE_PROGRAM}")  # scikit-build-core passes the ninja it chose
  else()
    find_program(_ninja NAMES ninja-build ninja)  # what project() would pick
  endif()
  if(NOT _ninja)
    return()  # project() will say that ninja is missing
  endif()
  set(_python "${Python_EXECUTABLE}")  # scikit-build-core passes the Python it builds for
  if(NOT _python)
    find_program(_python NAMES python3 python)
  endif()
  if(NOT _python)
    return()  # no Python: ninja's own output
  endif()
  set(_wrapper "${CMAKE_BINARY_DIR}/ninja-progress")
  get_filename_component(_filter "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../ninja_progress.py" ABSOLUTE)
  file(WRITE "${_wrapper}.in"
    "#!/bin/sh\nexec \"${_python}\" \"${_filter}\" \"${_ninja}\" \"$@\"\n")
  file(CHMOD "${_wrapper}.in" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
       WORLD_READ WORLD_EXECUTE)
  file(RENAME "${_wrapper}.in" "${_wrapper}")
  set(CMAKE_MAKE_PROGRAM "${_wrapper}" CACHE FILEPATH "ninja, through cmake/ninja_progress.py" FORCE)
endfunction()

tvm_wheels_progress_bar()
