// Words as a player reads them on the pages.

// "1 unit", "2 units", "0 units"; `many` for a plural that is not the word and an "s".
export function counted(n, one, many = `${one}s`) {
  return `${n} ${Number(n) === 1 ? one : many}`;
}

// A sentence starts with a capital.
export function sentence(text) {
  const s = String(text ?? "");
  return s.charAt(0).toUpperCase() + s.slice(1);
}
