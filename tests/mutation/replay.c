/*
 * tests/mutation — replays a libFuzzer target's inputs without libFuzzer: main() feeds each file named on the
 * command line to LLVMFuzzerTestOneInput (which aborts on a finding). Lets the gcc build run the committed
 * fuzz seeds and reproducers (tests/fuzz/corpus/<target>) as a plain test. Calls only the C library.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		static uint8_t buf[1 << 20];
		size_t n;
		if (!f) {
			perror(argv[i]);
			return 2;
		}
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, n);
		printf("ok %s\n", argv[i]);
	}
	return argc > 1 ? 0 : 2;
}
