/* What a compiler makes of printf calls: at -O1, fprintf(out, "\n") becomes fputc, printf("x")
 * putchar, fprintf(out, "text\n") fwrite; TestOutputHooked checks each call has its post hook. */
#include <stdio.h>

int main(int argc, char **argv)
{
	FILE *out = argc > 1 ? stdout : stderr;
	fprintf(out, "\n");
	printf("x");
	fprintf(out, "some text\n");
	putc('y', out);
	return 0;
}
