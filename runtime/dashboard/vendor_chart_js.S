/* Chart.js 3.9.1 (vendor/chart.js: chart.min.js and its licence, from Debian's libjs-chart.js), built into
   the binary as one NUL-terminated string: dashboard_page.cpp inlines it into the live page and report.html
   (nothing is fetched at run time). The assembler finds the file through -Wa,-I (runtime/CMakeLists.txt). */
    .section .rodata
    .global kv_chart_js
    .type kv_chart_js, @object
kv_chart_js:
    .incbin "chart.min.js"
    .byte 0
    .size kv_chart_js, . - kv_chart_js
    .section .note.GNU-stack, "", @progbits
