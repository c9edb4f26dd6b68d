/* d3-hierarchy 1.1.8 (vendor/d3-hierarchy: d3-hierarchy.min.js and its licence, from Debian's
   node-d3-hierarchy), built into the binary as one NUL-terminated string: dashboard_page.cpp inlines it into
   the live page and report.html (nothing is fetched at run time). The assembler finds the file through -Wa,-I (runtime/CMakeLists.txt). */
    .section .rodata
    .global kv_d3_hierarchy_js
    .type kv_d3_hierarchy_js, @object
kv_d3_hierarchy_js:
    .incbin "d3-hierarchy.min.js"
    .byte 0
    .size kv_d3_hierarchy_js, . - kv_d3_hierarchy_js
    .section .note.GNU-stack, "", @progbits
