/* output.c: what the program prints on its standard output, with the hooks the pass would emit
 * (post hooks of puts, fputs, printf, fprintf, dprintf, fwrite, putchar, fputc, putc;
 * __scry_format_loads after a printf-like call). Usage: output. Each site's line is the case's number. */
#include "common.h"

void scry_op_begin(const char *text);
void scry_op_end(void);

enum { S_PUTS, S_FPUTS, S_FPUTS_ERR, S_PRINTF, S_FPRINTF, S_FPRINTF_ERR, S_DPRINTF, S_SNPRINTF, S_LONG,
       S_FWRITE, S_FWRITE_ERR, S_PUTCHAR, S_FPUTC, S_PUTC, N_SITES };
/* The callee of each case, its site's line the case's number (from 1). */
static const char *const callees[N_SITES] = {"puts", "fputs", "fputs", "printf", "fprintf", "fprintf", "dprintf", "snprintf", "printf",
					     "fwrite", "fwrite", "putchar", "fputc", "putc"};

int main(void)
{
	static struct scry_site sites[N_SITES];
	for (int i = 0; i < N_SITES; i++)
		sites[i] = (struct scry_site)SITE(SCRY_SITE_LIBCALL, "main", (uint32_t)i + 1, callees[i]);
	uint32_t b = __scry_register_module(sites, N_SITES);
	scry_op_begin("op");
	int r = puts("one");
	__scry_post_puts(b + S_PUTS, r, "one");
	r = fputs("two\n", stdout);
	__scry_post_fputs(b + S_FPUTS, r, "two\n", stdout);
	r = fputs("err\n", stderr); /* standard error: not recorded */
	__scry_post_fputs(b + S_FPUTS_ERR, r, "err\n", stderr);
	r = printf("%d-%s\n", 3, "three");
	__scry_post_printf(b + S_PRINTF, r, "%d-%s\n");
	__scry_format_loads(b + S_PRINTF, "%d-%s\n", 3, "three");
	r = fprintf(stdout, "%s\n", "four");
	__scry_post_fprintf(b + S_FPRINTF, r, stdout, "%s\n");
	__scry_format_loads(b + S_FPRINTF, "%s\n", "four");
	r = fprintf(stderr, "%s\n", "nope");
	__scry_post_fprintf(b + S_FPRINTF_ERR, r, stderr, "%s\n");
	__scry_format_loads(b + S_FPRINTF_ERR, "%s\n", "nope");
	fflush(stdout);
	r = dprintf(1, "%c%c%c%c\n", 'f', 'i', 'v', 'e');
	__scry_post_dprintf(b + S_DPRINTF, r, 1, "%c%c%c%c\n");
	__scry_format_loads(b + S_DPRINTF, "%c%c%c%c\n", 'f', 'i', 'v', 'e');
	/* A format into memory: its format walk records no output. */
	char buf[16];
	r = snprintf(buf, sizeof buf, "%d", 6);
	__scry_post_snprintf(b + S_SNPRINTF, r, buf, sizeof buf, "%d");
	__scry_format_loads(b + S_SNPRINTF, "%d", 6);
	/* Longer than the runtime's stack buffer. */
	r = printf("%2000d|\n", 7);
	__scry_post_printf(b + S_LONG, r, "%2000d|\n");
	__scry_format_loads(b + S_LONG, "%2000d|\n", 7);
	/* What a compiler makes of printf("(null)\n") and printf("\n"), and their relatives. */
	size_t w = fwrite("(null)\n", 1, 7, stdout);
	__scry_post_fwrite(b + S_FWRITE, w, "(null)\n", 1, 7, stdout);
	w = fwrite("err\n", 4, 1, stderr); /* standard error: not recorded */
	__scry_post_fwrite(b + S_FWRITE_ERR, w, "err\n", 4, 1, stderr);
	r = putchar('a');
	__scry_post_putchar(b + S_PUTCHAR, r, 'a');
	r = fputc('b', stdout);
	__scry_post_fputc(b + S_FPUTC, r, 'b', stdout);
	r = putc('\n', stdout);
	__scry_post_putc(b + S_PUTC, r, '\n', stdout);
	scry_op_end();
	return 0;
}
