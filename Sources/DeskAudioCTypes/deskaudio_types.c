/* deskaudio_types.h holds only type definitions; SwiftPM needs one source file per C target. */
