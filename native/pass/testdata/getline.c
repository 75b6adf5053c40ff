// Operation boundaries: lines read from standard input with getline and getdelim. glibc's
// <bits/stdio.h> inlines getline into a call of __getdelim when optimizing; every form is hooked.
#include <stdio.h>
#include <stdlib.h>

long sum_lines(void)
{
	char *line = NULL;
	size_t cap = 0;
	long sum = 0;
	while (getline(&line, &cap, stdin) > 0)
		sum += atol(line);
	while (getdelim(&line, &cap, ';', stdin) > 0)
		sum += atol(line);
	free(line);
	return sum;
}
