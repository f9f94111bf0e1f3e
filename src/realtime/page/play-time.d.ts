// Types of play-time.js for the unit tests (the page itself is plain JavaScript, served as is).

export function elapsedText(ms: number): string;
