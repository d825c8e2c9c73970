# bench_smoke: fc_bench --quick runs, prints a well-formed table and writes well-formed JSON.
# Checks the shape only (every row has its numbers, the expected clocks are there), never a timing.
# cmake -DFC_BENCH=<path to fc_bench> -DOUT_DIR=<dir> -P check_table.cmake
set(json "${OUT_DIR}/bench_smoke.json")
file(REMOVE "${json}")
execute_process(COMMAND "${FC_BENCH}" --quick --markdown --json "${json}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 100)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fc_bench --quick exited with '${rc}': ${err}")
endif()

# ';' separates CMake list items: "lfence;rdtsc" would split a row in two.
string(REPLACE ";" "," out "${out}")

# The header, then rows: name, group, median min p25 p75, IQR%, x vDSO, x ctr, base, +ns.
if(NOT out MATCHES "\ncandidate +group +median +min +p25 +p75 +IQR% +x vDSO +x ctr +ctr base +\\+ns ctr\n")
  message(FATAL_ERROR "table header missing")
endif()
set(num "[0-9]+\\.[0-9][0-9]")
set(row "\n[^ \n][^\n]* +[a-z+]+ +${num} +${num} +${num} +${num} +[0-9]+\\.[0-9]% +${num}x +${num}x +[^ \n]+ +[-+]${num}")
string(REGEX MATCHALL "${row}" rows "${out}")
list(LENGTH rows nrows)
if(nrows LESS 20)
  message(FATAL_ERROR "only ${nrows} well-formed table rows")
endif()
foreach(name fc_mono_ns fc_mono_ns_relaxed fc_real_ns fc_mono_coarse_ns fc_ticks fc_real_bounded
             "clock_gettime\\(MONOTONIC\\)" "syscall\\(clock_gettime MONOTONIC\\)" gettimeofday
             "fastclock::steady_clock::now")
  if(NOT out MATCHES "\n${name} +[a-z+]+ +${num} ")
    message(FATAL_ERROR "no well-formed row for ${name}")
  endif()
endforeach()
if(NOT out MATCHES "\\(end of table: [0-9]+ candidates")
  message(FATAL_ERROR "table end line missing")
endif()
if(NOT out MATCHES "\nthread scaling: ")
  message(FATAL_ERROR "thread scaling table missing")
endif()
if(NOT out MATCHES "\n\\| clock \\| median ns/call \\|")
  message(FATAL_ERROR "markdown table missing")
endif()

# The JSON parses, has one entry per table row, and every median is a number.
file(READ "${json}" j)
string(JSON n LENGTH "${j}" candidates)
if(NOT n EQUAL nrows)
  message(FATAL_ERROR "JSON has ${n} candidates, the table ${nrows}")
endif()
math(EXPR last "${n} - 1")
foreach(i RANGE ${last})
  string(JSON t TYPE "${j}" candidates ${i} median)
  if(NOT t STREQUAL "NUMBER")
    string(JSON nm GET "${j}" candidates ${i} name)
    message(FATAL_ERROR "JSON median of ${nm} is ${t}")
  endif()
endforeach()
string(JSON ns LENGTH "${j}" scaling clocks)
if(ns LESS 1)
  message(FATAL_ERROR "JSON has no scaling results")
endif()
message("bench_smoke: ${nrows} rows, JSON with ${n} candidates and ${ns} scaling clocks")
