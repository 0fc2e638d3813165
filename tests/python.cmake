# The Python package's pytest tests (app/python/tests), when pybind11 was found (app/python/CMakeLists.txt).
if(HETSIM_PYTHON_FOUND)
  add_dependencies(hetsim_tests hetsim_python)
  add_test(NAME python.pytest
           COMMAND ${HETSIM_PYTHON_EXECUTABLE} -m pytest -q -p no:cacheprovider ${PROJECT_SOURCE_DIR}/app/python/tests)
  set_tests_properties(python.pytest PROPERTIES ENVIRONMENT
    "PYTHONPATH=${HETSIM_PYTHON_DIR};HETSIM_SOURCE_DIR=${PROJECT_SOURCE_DIR};HETSIM_BINARY=$<TARGET_FILE:hetsim>")
endif()
