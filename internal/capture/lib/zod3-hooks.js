// A module resolve hook for beeai-framework: BeeAI 0.1.30 imports `zod` without declaring it
// (its own build resolves zod 3 through a `resolutions` entry) and uses zod 3's API
// (`ZodEffects`), while the capture's `zod` is 4. zod 4 ships zod 3's API as `zod/v3`, so
// an import of `zod` from inside beeai-framework is resolved to `zod/v3`; nothing else is
// touched. Registered by beeai.js (module.register) before BeeAI is imported.
export async function resolve(specifier, context, next) {
  if (specifier === 'zod' && context.parentURL?.includes('/node_modules/beeai-framework/')) {
    return next('zod/v3', context);
  }
  return next(specifier, context);
}
