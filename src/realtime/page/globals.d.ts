// What the page finds in the browser besides the DOM, for its type check (tsconfig.json
// here): the Socket.IO client, loaded by index.html from the service itself (/socket.io).

declare const io: typeof import('socket.io-client').io;
