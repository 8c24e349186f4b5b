/**
 * Image references as engines accept them: [host[:port]/]path[:tag][@sha256:digest]. Checked before
 * a reference reaches an engine's command line, so a value can never be read as an option ("-v…").
 * Portable (no Node imports): the configuration and the tool's input schema use it too.
 */
export const imageReference =
  /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]{1,5})?(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::\w[\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/

export function isImageReference(value: string): boolean {
  return value.length <= 255 && imageReference.test(value)
}
