// three.js is served at /vendor/three (npm's package, see package.json); the pages name it
// "three" through the import map in index.html and station.html. Untyped here.
declare module "three";
