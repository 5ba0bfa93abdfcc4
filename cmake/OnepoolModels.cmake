# Generated test models: models/generate.py writes them into build/models with Debian's
# python3-onnx. The target runs once and again only when the generator changes.
find_program(ONEPOOL_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT ONEPOOL_PYTHON)
  find_program(ONEPOOL_PYTHON NAMES python3)
endif()
set(ONEPOOL_MODELS_DIR ${CMAKE_BINARY_DIR}/models)
file(GLOB ONEPOOL_MODEL_GENERATORS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/models/*.py)
add_custom_command(
  OUTPUT ${ONEPOOL_MODELS_DIR}/.stamp
  COMMAND ${ONEPOOL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/models/generate.py --out ${ONEPOOL_MODELS_DIR}
  COMMAND ${CMAKE_COMMAND} -E touch ${ONEPOOL_MODELS_DIR}/.stamp
  DEPENDS ${ONEPOOL_MODEL_GENERATORS}
  COMMENT "Generating the model suite into ${ONEPOOL_MODELS_DIR}")
add_custom_target(onepool_models ALL DEPENDS ${ONEPOOL_MODELS_DIR}/.stamp)
