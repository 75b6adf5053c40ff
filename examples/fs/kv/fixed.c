// A key-value store kept in one file, "store", as lines KEY=VALUE. It reads commands from its
// standard input, one per line: "set KEY VALUE" stores VALUE and prints "ok", "get KEY" prints
// the value or "none". The workload (file workload) drives it operation by operation; scry
// judges its crash states by output equivalence (WITCHER, SOSP'21, §4.5): after a crash in
// operation k, the rest of the workload must print what it prints when operation k committed or
// when it rolled back.
//
// Fixed twin of buggy.c: set writes the new store to store.tmp, fsyncs it, renames it over
// store and fsyncs the directory, so a crash leaves the old store or the new one.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX 64

static char keys[MAX][32], vals[MAX][32];
static int n;

static void load(void) {
	FILE *f = fopen("store", "r");
	char line[80];
	n = 0;
	if (!f)
		return;
	while (n < MAX && fgets(line, sizeof line, f)) {
		char *eq = strchr(line, '=');
		char *nl = strchr(line, '\n');
		if (!eq || !nl) /* a torn last line */
			continue;
		*eq = *nl = 0;
		snprintf(keys[n], sizeof keys[n], "%s", line);
		snprintf(vals[n], sizeof vals[n], "%s", eq + 1);
		n++;
	}
	fclose(f);
}

static void save(void) {
	char buf[MAX * 80];
	size_t len = 0;
	for (int i = 0; i < n; i++)
		len += snprintf(buf + len, sizeof buf - len, "%s=%s\n", keys[i], vals[i]);
	int fd = open("store.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int dir = open(".", O_RDONLY | O_DIRECTORY);
	if (fd < 0 || dir < 0 || write(fd, buf, len) != (ssize_t)len) {
		perror("store");
		exit(1);
	}
	fsync(fd);
	close(fd);
	if (rename("store.tmp", "store") != 0) {
		perror("rename");
		exit(1);
	}
	fsync(dir);
	close(dir);
}

int main(void) {
	char line[128], k[32], v[32];
	load();
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "set %31s %31s", k, v) == 2) {
			int i = 0;
			while (i < n && strcmp(keys[i], k) != 0)
				i++;
			if (i == n && n < MAX)
				n++;
			snprintf(keys[i], sizeof keys[i], "%s", k);
			snprintf(vals[i], sizeof vals[i], "%s", v);
			save();
			printf("ok\n");
		} else if (sscanf(line, "get %31s", k) == 1) {
			int i = 0;
			while (i < n && strcmp(keys[i], k) != 0)
				i++;
			printf("%s\n", i < n ? vals[i] : "none");
		}
		fflush(stdout);
	}
	return 0;
}
