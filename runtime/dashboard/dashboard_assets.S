/* The dashboard's own script and style (runtime/dashboard/assets/: view.css, view.js, live.js, report.js),
   built into the binary as NUL-terminated strings, as the vendored libraries are (vendor_chart_js.S): they
   are edited, linted and diffed as the .js and .css files they are. The assembler finds them through -Wa,-I
   (runtime/CMakeLists.txt). */
    .section .rodata
    .macro kv_asset name, file
    .global \name
    .type \name, @object
\name:
    .incbin "\file"
    .byte 0
    .size \name, . - \name
    .endm
    kv_asset kv_view_style, "view.css"
    kv_asset kv_view_script, "view.js"
    kv_asset kv_live_script, "live.js"
    kv_asset kv_report_script, "report.js"
    .section .note.GNU-stack, "", @progbits
