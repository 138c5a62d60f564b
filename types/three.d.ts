// three.js ships in the package (src/freelook/web/static/vendor/three, npm's build at the
// version package-lock.json locks); the pages name it "three" through the import map in
// index.html and station.html. Untyped here.
declare module "three";
