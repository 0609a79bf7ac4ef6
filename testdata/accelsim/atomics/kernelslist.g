MemcpyHtoD,0x00007f0000001000,4096
kernel-1.traceg
kernel-2.traceg
