# cmake -DKFORGE=<kforge> -DHELP2MAN=<help2man> -DOUT=<kforge.1> -DINCLUDE=<kforge.h2m> -P KfManPage.cmake
# kforge.1(.gz) from the program's own help: help2man turns `kforge --help` into the page, and each
# subcommand's `kforge <command> --help` becomes a subsection of COMMANDS, so every option the
# CLI accepts is in the page and none that it does not.
execute_process(COMMAND ${KFORGE} --help OUTPUT_VARIABLE top RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${KFORGE} --help failed (${rc})")
endif()
# CLI11 lists them under "Subcommands:" (upper case in other versions) as "    name   description".
string(REGEX MATCH "(SUBCOMMANDS|Subcommands):\n(.*)" _ "${top}")
string(REGEX MATCHALL "\n +[a-z][a-z0-9-]* " names "\n${CMAKE_MATCH_2}")
if(NOT names)
  message(FATAL_ERROR "no subcommands found in `${KFORGE} --help`:\n${top}")
endif()
file(READ ${INCLUDE} text)
string(APPEND text "\n[COMMANDS]\n")
foreach(name IN LISTS names)
  string(STRIP "${name}" name)
  execute_process(COMMAND ${KFORGE} ${name} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${KFORGE} ${name} --help failed (${rc})")
  endif()
  # roff: backslashes doubled, a line's leading dot or quote escaped, shown as typed.
  string(REPLACE "\\" "\\e" help "${help}")
  string(REGEX REPLACE "\n([.'])" "\n\\\\&\\1" help "\n${help}")
  string(APPEND text ".SS kforge ${name}\n.nf\n${help}\n.fi\n")
endforeach()
get_filename_component(dir ${OUT} DIRECTORY)
file(MAKE_DIRECTORY ${dir})
file(WRITE ${OUT}.h2m "${text}")
execute_process(COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C.UTF-8 ${HELP2MAN} --no-info --no-discard-stderr --section 1 --locale C.UTF-8
                        --name "compile, verify, benchmark and promote CUDA kernels against LibTorch"
                        --include ${OUT}.h2m --output ${OUT} ${KFORGE} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed (${rc}) on ${KFORGE}")
endif()
# CLI11 prints the program's path as typed (the build tree's) in each usage line, and help2man
# copies the em dash as UTF-8, which a page rendered in the C locale shows as "???".
file(READ ${OUT} page)
string(REPLACE "${KFORGE}" "kforge" page "${page}")
string(REPLACE "—" "\\(em" page "${page}")
file(WRITE ${OUT} "${page}")
# Debian installs pages compressed; -n keeps the name and time out, so the package is reproducible.
file(REMOVE ${OUT}.gz)
execute_process(COMMAND gzip -9n ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip ${OUT} failed (${rc})")
endif()
