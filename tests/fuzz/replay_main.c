/*
 * A libFuzzer-free driver: feeds each file named on the command line to LLVMFuzzerTestOneInput once. Lets the
 * dev preset (gcc, no libFuzzer) replay the committed reproducers of tests/fuzz/findings on every build, so
 * the fixes they guard (the expired-hand floor, rate adoption) are tested deterministically there too, and
 * the mutation gate (tests/mutation) can use them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *buf;
		long n;
		if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
			fprintf(stderr, "replay: cannot read %s\n", argv[i]);
			return 2;
		}
		buf = malloc((size_t)n + 1);
		if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
			fprintf(stderr, "replay: cannot read %s\n", argv[i]);
			return 2;
		}
		fclose(f);
		LLVMFuzzerTestOneInput(buf, (size_t)n); /* aborts on a violation */
		free(buf);
	}
	printf("replay: %d inputs, no violation\n", argc - 1);
	return 0;
}
