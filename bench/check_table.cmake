# bench_smoke: `fastclock bench --markdown` over every clock prints the two tables docs/PERFORMANCE.md quotes,
# well formed: every clock's row with its median, spread and both per-round ratios as numbers (a ratio that
# is missing prints "nan" and fails), the reference rows present, the thread table with a row per clock.
# Checks the shape only, never a timing.   cmake -DFC=<path to fastclock> -P check_table.cmake
execute_process(COMMAND "${FC}" bench --markdown --duration 3 --threads 1,2
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 100)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fastclock bench --markdown exited with '${rc}': ${err}")
endif()
execute_process(COMMAND "${FC}" bench --list OUTPUT_VARIABLE list)
string(REPLACE ";" "," list "${list}")
string(REGEX MATCHALL "(^|\n)[^ \n]+" names "${list}")
list(LENGTH names nclocks)

# ';' separates CMake list items: "lfence;rdtsc" would split a row in two.
string(REPLACE ";" "," out "${out}")
if(NOT out MATCHES "\n\\| clock \\| median ns/call \\| p25 – p75 \\| x vDSO MONOTONIC \\| x counter \\| counter \\|\n")
  message(FATAL_ERROR "cost table header missing")
endif()
set(num "[0-9]+\\.[0-9][0-9]")
# One well-formed row per clock of a table: fails naming the table otherwise; the count in ${outvar}.
function(expect_rows regex what outvar)
  string(REGEX MATCHALL "${regex}" rows "${out}")
  list(LENGTH rows n)
  if(NOT n EQUAL nclocks)
    message(FATAL_ERROR "${n} well-formed ${what} rows for ${nclocks} clocks (bench --list)")
  endif()
  set(${outvar} ${n} PARENT_SCOPE)
endfunction()
expect_rows("\n\\| `[^`]+` \\| ${num} \\| ${num} – ${num} \\| ${num} \\| ${num} \\| `[^`]+` \\|" cost nrows)
foreach(name "\\(empty loop\\)" "(rdtsc|cntvct)" "(lfence,rdtsc|isb,cntvct)" syscall.clock_gettime.MONOTONIC fc_mono_ns
             fc_mono_ns_relaxed fc_real_ns fc_mono_coarse_ns fc_ticks fc_real_bounded clock_gettime.MONOTONIC
             gettimeofday std::chrono::steady_clock fastclock::steady_clock)
  if(NOT out MATCHES "\n\\| `${name}` \\| ${num} ")
    message(FATAL_ERROR "no well-formed cost row for ${name}")
  endif()
endforeach()
if(NOT out MATCHES "\n\\| `clock_gettime.MONOTONIC` \\| ${num} \\| ${num} – ${num} \\| 1.00 \\|")
  message(FATAL_ERROR "the vDSO's own ratio to itself is not 1.00")
endif()
if(NOT out MATCHES "\n\\| clock \\| 1 thr: Mcalls/s, eff, cpu \\| 2 thr: Mcalls/s, eff, cpu \\|\n")
  message(FATAL_ERROR "thread table header missing")
endif()
expect_rows("\n\\| `[^`]+` \\| [0-9.]+, 1.00, [0-9.]+ \\| [0-9.]+, [0-9.]+, [0-9.]+ \\|" thread ntrows)
# the single-read latency table: a row per clock, five numbers, none of them nan
if(NOT out MATCHES "\n\\| clock \\| single read p50 ns \\| p99 \\| p99.9 \\| p99.99 \\| max \\|\n")
  message(FATAL_ERROR "latency table header missing")
endif()
expect_rows("\n\\| `[^`]+` \\| [0-9.]+ \\| [0-9.]+ \\| [0-9.]+ \\| [0-9.]+ \\| [0-9]+ \\|" latency nlrows)
message("bench_smoke: ${nrows} cost rows, ${ntrows} thread rows and ${nlrows} latency rows for ${nclocks} clocks")
