/* Flushes and fences written in inline assembly, as PMDK and research code do. */
#define FLUSH(p) asm volatile("clflush %0" : "+m"(*(volatile char *)(p)))
#define FLUSHOPT_OLD(p) asm volatile(".byte 0x66; clflush %0" : "+m"(*(volatile char *)(p)))
#define CLWB_OLD(p) asm volatile(".byte 0x66; xsaveopt %0" : "+m"(*(volatile char *)(p)))
#define CLWB_REG(p) asm volatile("clwb (%0)" ::"r"(p) : "memory")
#define SFENCE() asm volatile("sfence" ::: "memory")
#define MFENCE() asm volatile("mfence" ::: "memory")

void asm_flushes(char *p, long *q) {
	FLUSH(p); // want: flush
	FLUSHOPT_OLD(p + 64); // want: flush
	CLWB_OLD(p + 128); // want: flush
	CLWB_REG(p + 192); // want: flush
	SFENCE(); // want: fence
	MFENCE(); // want: fence
	asm volatile("clflush (%0); sfence" ::"r"(p) : "memory"); // want: flush fence
	asm volatile("lock; addq $1, %0" : "+m"(*q)); // want: rmw
	asm volatile("clflushopt %0" : "+m"(*(volatile char *)p)); // want: flush
}
