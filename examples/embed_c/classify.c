/* classify_c PLAN IMAGE.f32 OUT.f32: loads a gcomp plan, runs it on one image (raw little-endian
 * float32 in the plan input's shape at batch 1), prints the top-5 classes and writes the logits
 * (raw float32) to OUT. Uses only the C API of libgcomp.so. */
#include <gcomp/gcomp_c.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const char* what, const char* message) {
  fprintf(stderr, "classify_c: %s: %s\n", what, message);
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: classify_c PLAN IMAGE.f32 OUT.f32\n");
    return 2;
  }
  gcomp_plan* plan = NULL;
  if (gcomp_plan_load(argv[1], &plan) != GCOMP_OK) {
    int rc = fail("load", gcomp_plan_error(plan));
    gcomp_plan_free(plan);
    return rc;
  }
  gcomp_tensor_info info;
  if (gcomp_plan_input(plan, 0, &info) != GCOMP_OK) return fail("input", gcomp_plan_error(plan));
  size_t count = 1;
  for (size_t k = 0; k < info.rank; ++k) count *= (size_t)info.shape[k];
  float* image = malloc(count * sizeof(float));
  FILE* f = fopen(argv[2], "rb");
  if (!image || !f || fread(image, sizeof(float), count, f) != count) return fail(argv[2], "cannot read the image");
  fclose(f);

  gcomp_session_options options = gcomp_session_options_default();
  options.threads = 1;
  gcomp_session* session = NULL;
  if (gcomp_session_create(plan, &options, &session) != GCOMP_OK) return fail("session", gcomp_session_error(session));
  gcomp_tensor input = {info.name, GCOMP_FLOAT32, info.rank, {0}, image, count * sizeof(float)};
  for (size_t k = 0; k < info.rank; ++k) input.shape[k] = info.shape[k];
  gcomp_tensor* outputs = NULL;
  size_t num_outputs = 0;
  if (gcomp_session_run_alloc(session, &input, 1, &outputs, &num_outputs) != GCOMP_OK) {
    return fail("run", gcomp_session_error(session));
  }
  const float* logits = (const float*)outputs[0].data;
  const size_t classes = outputs[0].bytes / sizeof(float);
  int top[5] = {-1, -1, -1, -1, -1};
  for (int r = 0; r < 5 && r < (int)classes; ++r) {
    for (size_t c = 0; c < classes; ++c) {
      int taken = 0;
      for (int q = 0; q < r; ++q) taken |= top[q] == (int)c;
      if (!taken && (top[r] < 0 || logits[c] > logits[top[r]])) top[r] = (int)c;
    }
    printf("top-%d: class %d (%.4f)\n", r + 1, top[r], logits[top[r]]);
  }
  FILE* out = fopen(argv[3], "wb");
  if (!out || fwrite(logits, sizeof(float), classes, out) != classes) return fail(argv[3], "cannot write the logits");
  fclose(out);
  gcomp_tensors_free(outputs, num_outputs);
  gcomp_session_free(session);
  gcomp_plan_free(plan);
  free(image);
  return 0;
}
