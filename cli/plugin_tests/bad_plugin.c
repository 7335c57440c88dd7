/* Plugins pe-suite must refuse, one per BAD_* definition (plugin_test.sh checks each message). */
#include <pe/plugin.h>

static void rotate(void* user_data, const pe_rope_plan* plan, const pe_rope_batch* batch, int32_t direction,
                   const pe_buffer* x) {
  (void)user_data, (void)plan, (void)batch, (void)direction, (void)x;
}

static pe_kernel valid_kernel(void) {
  pe_kernel k = {
      .struct_size = sizeof(pe_kernel),
      .family = PE_FAMILY_ROPE,
      .name = "rope.plugtest_bad",
      .contract =
          {
              .layouts = PE_BIT(PE_LAYOUT_HALFSPLIT),
              .outputs = PE_BIT(PE_DTYPE_F32),
              .angle_type = PE_DTYPE_F32,
              .compute_type = PE_DTYPE_F32,
              .max_position = 1024,
              .max_base = 1e4,
              .max_input_abs = 1,
              .c0 = 1,
              .c1 = 2,
              .ca = 3,
          },
      .rope_apply = rotate,
  };
  return k;
}

#ifdef BAD_NO_ENTRY
/* Not the entry's name: pe-suite must say the entry is missing. */
PE_PLUGIN_EXPORT int pe_plugin_init(const pe_host* host);
PE_PLUGIN_EXPORT int pe_plugin_init(const pe_host* host) {
  const pe_kernel k = valid_kernel();
  return pe_register_kernel(host, &k);
}
#else
PE_PLUGIN_EXPORT int pe_plugin_register(const pe_host* host) {
  pe_kernel k = valid_kernel();
#if defined(BAD_ABI)
  return host->register_kernel(host->context, 99, &k);
#elif defined(BAD_NULL_FUNCTION)
  k.rope_apply = NULL;
#elif defined(BAD_CONTRACT)
  k.contract.c1 = -1;
#elif defined(BAD_DUPLICATE_BUILTIN)
  k.name = "rope.scalar_f32";
#elif defined(BAD_TWICE)
  pe_register_kernel(host, &k);
#elif defined(BAD_NAME)
  k.name = "rope.Engine-C";
#elif defined(BAD_REFUSES)
  host->report_error(host->context, "needs AVX-512, this CPU has none");
  return 3;
#endif
  return pe_register_kernel(host, &k);
}
#endif
