// The page of `liembs view` (framework/src/view/run_view.cpp writes the data it reads,
// docs/viewer.md describes it): the bodies of a run posed from the trajectory's columns,
// playback controls, and a plot of one column with a cursor at the time shown.
(function () {
  'use strict';

  const data = JSON.parse(document.getElementById('run-data').textContent);
  const times = data.columns.time;
  const frameCount = times.length;
  const startTime = times[0];
  const endTime = times[frameCount - 1];

  // Colours of what is drawn.
  const palette = [0x4e79a7, 0xf28e2b, 0x59a14f, 0xe15759, 0x76b7b2, 0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f];
  const revoluteColor = 0xd62728;
  const prismaticColor = 0x1f77b4;
  const constraintColor = 0x9467bd;

  // --- Header -----------------------------------------------------------------------------
  document.title = data.title + ' - LieMBS';
  document.getElementById('title').textContent = data.title;
  document.getElementById('choices').textContent =
      data.notes.join(', ') + ' - ' + data.rows_in_source + ' rows' +
      (frameCount < data.rows_in_source ? ' (' + frameCount + ' shown)' : '');

  // --- Scene ------------------------------------------------------------------------------
  const canvas = document.getElementById('scene');
  const viewport = document.getElementById('viewport');
  const scale = data.scale;
  const up = new THREE.Vector3().fromArray(data.up).normalize();

  let renderer;
  try {
    renderer = new THREE.WebGLRenderer({canvas: canvas, antialias: true});
  } catch (error) {
    document.getElementById('message').textContent = 'WebGL is not available in this browser: ' + error.message;
    return;
  }
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  renderer.setClearColor(0xeef1f5);

  const scene = new THREE.Scene();
  const camera = new THREE.PerspectiveCamera(45, 1);  // near and far set below
  camera.up.copy(up);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x8890a0, 0.75));
  const sun = new THREE.DirectionalLight(0xffffff, 0.55);
  scene.add(sun);

  function material(color, from) {
    const rgba = color || null;
    const base = rgba ? new THREE.Color(rgba[0], rgba[1], rgba[2]) : new THREE.Color(from);
    const opacity = rgba ? rgba[3] : 1;
    return new THREE.MeshStandardMaterial({
      color: base, roughness: 0.7, metalness: 0.05, transparent: opacity < 1, opacity: opacity,
    });
  }

  // The page's meshes (run_view.cpp's "meshes"), each parsed once: an STL or OBJ file's
  // bytes (base64) by three.js's loaders, triangles (MJCF) directly. A mesh that does not
  // parse is named in the message line and not drawn.
  function fileBytes(base64) {
    const text = atob(base64);
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; ++i) bytes[i] = text.charCodeAt(i);
    return bytes.buffer;
  }
  function parseMesh(mesh) {
    if (mesh.format === 'stl') return [new THREE.STLLoader().parse(fileBytes(mesh.base64))];
    if (mesh.format === 'obj') {
      const geometries = [];
      new THREE.OBJLoader().parse(new TextDecoder().decode(fileBytes(mesh.base64))).traverse((object) => {
        if (object.isMesh) geometries.push(object.geometry);
      });
      return geometries;
    }
    if (mesh.format === 'triangles') {
      const indexed = new THREE.BufferGeometry();
      indexed.setAttribute('position', new THREE.Float32BufferAttribute(mesh.vertices, 3));
      indexed.setIndex(mesh.faces);
      const geometry = indexed.toNonIndexed();  // flat faces
      geometry.computeVertexNormals();
      return [geometry];
    }
    throw new Error('unknown mesh format ' + mesh.format);
  }
  const meshProblems = [];
  const meshGeometries = data.meshes.map((mesh) => {
    try {
      const geometries = parseMesh(mesh);
      if (!geometries.some((geometry) => geometry.getAttribute('position').count >= 3))
        throw new Error('no triangles in it');
      return geometries;
    } catch (error) {
      meshProblems.push('mesh ' + mesh.source + ' is not drawn: ' + error.message);
      return [];
    }
  });
  document.getElementById('message').textContent = meshProblems.join('; ');

  // A mesh for a shape of run_view.cpp's JSON (VisualShape's fields) in its parent's frame.
  function shapeObject(shape, fallbackColor) {
    const look = material(shape.color, fallbackColor);
    let object;
    switch (shape.type) {
      case 'mesh':
        // Both sides: a mirroring scale or a file's inconsistent winding leaves no hole.
        look.side = THREE.DoubleSide;
        object = new THREE.Group();
        object.name = 'mesh ' + data.meshes[shape.mesh].source;
        for (const geometry of meshGeometries[shape.mesh]) object.add(new THREE.Mesh(geometry, look));
        object.scale.fromArray(shape.scale);
        break;
      case 'box':
        object = new THREE.Mesh(new THREE.BoxBufferGeometry(shape.box_size[0], shape.box_size[1], shape.box_size[2]), look);
        break;
      case 'sphere':
        object = new THREE.Mesh(new THREE.SphereBufferGeometry(shape.radius, 32, 16), look);
        break;
      case 'ellipsoid':
        object = new THREE.Mesh(new THREE.SphereBufferGeometry(1, 32, 16), look);
        object.scale.fromArray(shape.radii);
        break;
      case 'cylinder':
      case 'capsule': {
        // three.js's cylinders lie along y; LieMBS's (URDF's) along z.
        const cylinder = new THREE.CylinderBufferGeometry(shape.radius, shape.radius, shape.length, 32);
        cylinder.rotateX(Math.PI / 2);
        object = new THREE.Group();
        object.add(new THREE.Mesh(cylinder, look));
        if (shape.type === 'capsule') {
          for (const side of [-1, 1]) {
            const cap = new THREE.Mesh(new THREE.SphereBufferGeometry(shape.radius, 32, 16), look);
            cap.position.set(0, 0, side * shape.length / 2);
            object.add(cap);
          }
        }
        break;
      }
      default:
        throw new Error('unknown shape type ' + shape.type);
    }
    if (shape.from === 'inertia') {
      // The inertia box: translucent, with its edges, so that it does not pass for geometry.
      look.transparent = true;
      look.opacity = 0.55;
      const edges = new THREE.LineSegments(new THREE.EdgesGeometry(object.geometry),
                                           new THREE.LineBasicMaterial({color: 0x333333}));
      object.add(edges);
    }
    object.position.fromArray(shape.position);
    object.quaternion.fromArray(shape.quaternion);
    return object;
  }

  // An axis: a line through `point` along `direction` with an arrow head.
  function axisObject(axis, color) {
    const direction = new THREE.Vector3().fromArray(axis.direction).normalize();
    const length = 0.25 * scale;
    const origin = new THREE.Vector3().fromArray(axis.point).addScaledVector(direction, -0.5 * length);
    return new THREE.ArrowHelper(direction, origin, length, color, 0.2 * length, 0.08 * length);
  }

  function markerObject(point, color) {
    const marker = new THREE.Mesh(new THREE.SphereBufferGeometry(0.015 * scale, 16, 8),
                                  new THREE.MeshBasicMaterial({color: color}));
    marker.position.fromArray(point);
    return marker;
  }

  const frameHelpers = [];
  const axisHelpers = [];
  const bodies = data.bodies.map((body, index) => {
    const group = new THREE.Group();
    group.name = body.name;
    const color = palette[index % palette.length];
    for (const shape of body.shapes) group.add(shapeObject(shape, color));
    if (body.shapes.length === 0) group.add(markerObject(body.center_of_mass, color));
    const frame = new THREE.AxesHelper(0.12 * scale);
    frameHelpers.push(frame);
    group.add(frame);
    scene.add(group);
    const prefix = body.name + '.';
    const column = (name) => {
      const values = data.columns[prefix + name];
      if (!values) throw new Error('no column ' + prefix + name);
      return values;
    };
    return {
      name: body.name,
      group: group,
      x: column('x'), y: column('y'), z: column('z'),
      qw: column('qw'), qx: column('qx'), qy: column('qy'), qz: column('qz'),
    };
  });

  const world = new THREE.Group();
  scene.add(world);
  for (const shape of data.world_shapes) world.add(shapeObject(shape, 0x999999));
  // Axes and points fixed in a body (index) or the world (-1).
  function attach(object, body) {
    (body < 0 ? world : bodies[body].group).add(object);
  }
  for (const joint of data.joints) {
    for (const axis of joint.axes) {
      const helper = axisObject(axis, axis.kind === 'prismatic' ? prismaticColor : revoluteColor);
      axisHelpers.push(helper);
      attach(helper, axis.body);
    }
  }
  for (const constraint of data.constraints) {
    for (const mark of constraint.points) {
      const marker = markerObject(mark.point, constraintColor);
      axisHelpers.push(marker);
      attach(marker, mark.body);
    }
    for (const axis of constraint.axes) {
      const helper = axisObject(axis, constraintColor);
      axisHelpers.push(helper);
      attach(helper, axis.body);
    }
  }

  // --- Posing the bodies at a time --------------------------------------------------------
  // The last frame at or before t (binary search).
  function frameAt(t) {
    let low = 0, high = frameCount - 1;
    if (t <= times[0]) return 0;
    if (t >= times[high]) return high;
    while (high - low > 1) {
      const middle = (low + high) >> 1;
      if (times[middle] <= t) low = middle; else high = middle;
    }
    return low;
  }

  const qa = new THREE.Quaternion(), qb = new THREE.Quaternion();
  // Poses between two rows: positions interpolated linearly, orientations by slerp.
  function poseBodies(t) {
    const k = frameAt(t);
    const next = Math.min(k + 1, frameCount - 1);
    const span = times[next] - times[k];
    const alpha = span > 0 ? Math.min(Math.max((t - times[k]) / span, 0), 1) : 0;
    for (const body of bodies) {
      if (body.x[k] === null || body.x[next] === null) continue;
      body.group.position.set(
          body.x[k] + alpha * (body.x[next] - body.x[k]),
          body.y[k] + alpha * (body.y[next] - body.y[k]),
          body.z[k] + alpha * (body.z[next] - body.z[k]));
      qa.set(body.qx[k], body.qy[k], body.qz[k], body.qw[k]).normalize();
      qb.set(body.qx[next], body.qy[next], body.qz[next], body.qw[next]).normalize();
      body.group.quaternion.copy(qa).slerp(qb, alpha);
    }
  }

  // --- Camera and ground grid --------------------------------------------------------------
  // The region the bodies sweep: their bounding box at 24 times across the run.
  const swept = new THREE.Box3();
  for (let i = 0; i < 24; ++i) {
    poseBodies(startTime + (endTime - startTime) * i / 23);
    for (const body of bodies) swept.expandByObject(body.group);
  }
  if (world.children.length) swept.expandByObject(world);
  poseBodies(startTime);
  const centre = swept.getCenter(new THREE.Vector3());
  const extent = Math.max(swept.getSize(new THREE.Vector3()).length(), scale);

  // A grid in the plane normal to "up" (against gravity) under the swept region, cells of a
  // power of ten in metres.
  let lowest = Infinity;
  for (const x of [swept.min.x, swept.max.x])
    for (const y of [swept.min.y, swept.max.y])
      for (const z of [swept.min.z, swept.max.z]) lowest = Math.min(lowest, new THREE.Vector3(x, y, z).dot(up));
  const cell = Math.pow(10, Math.floor(Math.log10(extent / 4)));  // a power of ten: 8 to 80 cells
  const cells = Math.ceil(2 * extent / cell);
  const grid = new THREE.GridHelper(cells * cell, cells, 0xb8c0cc, 0xd4dae2);
  grid.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), up);
  grid.position.copy(centre).addScaledVector(up, lowest - centre.dot(up));
  scene.add(grid);

  // Look from a direction that is neither along "up" nor a coordinate axis, far enough that
  // the swept region fills most of the view.
  const side = new THREE.Vector3(1, -1.6, 0.8);
  side.addScaledVector(up, -side.dot(up)).normalize();
  const viewDirection = side.multiplyScalar(Math.cos(0.45)).addScaledVector(up, Math.sin(0.45));
  camera.position.copy(centre).addScaledVector(viewDirection, 0.42 * extent / Math.tan(camera.fov * Math.PI / 360));
  camera.near = extent * 1e-3;
  camera.far = extent * 1e2;
  sun.position.copy(camera.position).addScaledVector(up, extent);
  const controls = new THREE.OrbitControls(camera, canvas);
  controls.target.copy(centre);
  controls.update();

  // --- Plot -------------------------------------------------------------------------------
  const plotCanvas = document.getElementById('plot');
  const columnSelect = document.getElementById('column');
  const logScale = document.getElementById('log-scale');
  const legend = document.getElementById('plot-legend');
  for (const name of Object.keys(data.columns)) {
    if (name === 'time') continue;
    const option = document.createElement('option');
    option.value = option.textContent = name;
    columnSelect.appendChild(option);
  }
  columnSelect.value = data.column;

  const plotMargin = {left: 120, right: 16, top: 10, bottom: 24};

  function plotValue(value) {
    if (value === null) return null;
    if (!logScale.checked) return value;
    const magnitude = Math.abs(value);
    return magnitude > 0 ? Math.log10(magnitude) : null;
  }

  // `value` with `digits` significant digits, without trailing zeros.
  function formatNumber(value, digits = 4) {
    if (value === 0) return '0';
    const magnitude = Math.abs(value);
    if (magnitude >= 1e-3 && magnitude < 1e5) {
      const text = value.toPrecision(digits);
      return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
    }
    return value.toExponential(digits - 1).replace(/\.?0+e/, 'e');
  }

  function drawPlot(t) {
    const ratio = window.devicePixelRatio || 1;
    const width = plotCanvas.clientWidth, height = plotCanvas.clientHeight;
    if (plotCanvas.width !== Math.round(width * ratio) || plotCanvas.height !== Math.round(height * ratio)) {
      plotCanvas.width = Math.round(width * ratio);
      plotCanvas.height = Math.round(height * ratio);
    }
    const context = plotCanvas.getContext('2d');
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    context.clearRect(0, 0, width, height);
    const values = data.columns[columnSelect.value].map(plotValue);
    let low = Infinity, high = -Infinity;
    for (const value of values) {
      if (value === null) continue;
      low = Math.min(low, value);
      high = Math.max(high, value);
    }
    if (!isFinite(low)) {
      legend.textContent = 'no finite values' + (logScale.checked ? ' (or all zero)' : '');
      return;
    }
    if (high - low <= 1e-12 * Math.max(Math.abs(high), Math.abs(low), 1e-300)) {
      const pad = Math.abs(high) > 0 ? 0.5 * Math.abs(high) : 1;  // a constant column
      low -= pad;
      high += pad;
    }
    const plotWidth = width - plotMargin.left - plotMargin.right;
    const plotHeight = height - plotMargin.top - plotMargin.bottom;
    const timeSpan = endTime > startTime ? endTime - startTime : 1;
    const xOf = (time) => plotMargin.left + plotWidth * (time - startTime) / timeSpan;
    const yOf = (value) => plotMargin.top + plotHeight * (high - value) / (high - low);

    context.fillStyle = '#444';
    context.font = '11px sans-serif';
    context.textAlign = 'right';
    context.textBaseline = 'middle';
    // Enough digits that the labels of a small drift on a large value (energy) differ.
    const digits = Math.min(16, Math.max(3, Math.ceil(Math.log10(Math.max(Math.abs(high), Math.abs(low)) / (high - low))) + 2));
    const label = (value) => (logScale.checked ? '1e' + value.toFixed(1) : formatNumber(value, digits));
    for (const value of [low, (low + high) / 2, high]) {
      context.fillText(label(value), plotMargin.left - 6, yOf(value));
      context.strokeStyle = '#eee';
      context.beginPath();
      context.moveTo(plotMargin.left, yOf(value));
      context.lineTo(plotMargin.left + plotWidth, yOf(value));
      context.stroke();
    }
    context.strokeStyle = '#bbb';
    context.strokeRect(plotMargin.left, plotMargin.top, plotWidth, plotHeight);
    context.textAlign = 'center';
    context.textBaseline = 'top';
    context.fillText(formatNumber(startTime) + ' s', xOf(startTime), plotMargin.top + plotHeight + 4);
    context.fillText(formatNumber(endTime) + ' s', xOf(endTime) - 12, plotMargin.top + plotHeight + 4);

    context.strokeStyle = '#1f5fa8';
    context.lineWidth = 1.5;
    context.beginPath();
    let drawing = false;
    for (let k = 0; k < frameCount; ++k) {
      if (values[k] === null) {
        drawing = false;
        continue;
      }
      if (drawing) context.lineTo(xOf(times[k]), yOf(values[k]));
      else context.moveTo(xOf(times[k]), yOf(values[k]));
      drawing = true;
    }
    context.stroke();

    // The cursor at the time shown, and the value there.
    const cursor = xOf(t);
    context.strokeStyle = '#d62728';
    context.lineWidth = 1;
    context.beginPath();
    context.moveTo(cursor, plotMargin.top);
    context.lineTo(cursor, plotMargin.top + plotHeight);
    context.stroke();
    const raw = data.columns[columnSelect.value][frameAt(t)];
    legend.textContent = columnSelect.value + ' = ' + (raw === null ? 'not a number' : String(raw)) +
                         ' at t = ' + formatNumber(times[frameAt(t)]) + ' s';
    plotCanvas.timeAt = (x) => startTime + (x - plotMargin.left) / plotWidth * timeSpan;
  }

  // --- Playback ---------------------------------------------------------------------------
  const playButton = document.getElementById('play');
  const slider = document.getElementById('time-slider');
  const readout = document.getElementById('time-readout');
  const speedSelect = document.getElementById('speed');
  slider.min = startTime;
  slider.max = endTime;

  let currentTime = startTime;
  let playing = false;
  let lastClock = null;

  function showTime(t) {
    currentTime = Math.min(Math.max(t, startTime), endTime);
    poseBodies(currentTime);
    slider.value = currentTime;
    readout.textContent = 't = ' + currentTime.toFixed(4) + ' / ' + endTime.toFixed(4) + ' s';
    drawPlot(currentTime);
  }

  function setPlaying(on) {
    playing = on;
    lastClock = null;
    playButton.textContent = on ? 'Pause' : 'Play';
  }

  playButton.addEventListener('click', () => {
    if (!playing && currentTime >= endTime) showTime(startTime);
    setPlaying(!playing);
  });
  slider.addEventListener('input', () => showTime(parseFloat(slider.value)));
  columnSelect.addEventListener('change', () => drawPlot(currentTime));
  logScale.addEventListener('change', () => drawPlot(currentTime));
  document.getElementById('show-frames').addEventListener('change', (event) => {
    for (const helper of frameHelpers) helper.visible = event.target.checked;
  });
  document.getElementById('show-axes').addEventListener('change', (event) => {
    for (const helper of axisHelpers) helper.visible = event.target.checked;
  });
  // Clicking or dragging in the plot moves to that time.
  let seeking = false;
  const seek = (event) => {
    if (plotCanvas.timeAt) showTime(plotCanvas.timeAt(event.offsetX));
  };
  plotCanvas.addEventListener('mousedown', (event) => { seeking = true; seek(event); });
  plotCanvas.addEventListener('mousemove', (event) => { if (seeking) seek(event); });
  window.addEventListener('mouseup', () => { seeking = false; });

  function resize() {
    const width = viewport.clientWidth, height = viewport.clientHeight;
    renderer.setSize(width, height, false);
    camera.aspect = width / Math.max(height, 1);
    camera.updateProjectionMatrix();
    drawPlot(currentTime);
  }
  window.addEventListener('resize', resize);

  function animate(clock) {
    if (playing) {
      if (lastClock !== null) {
        const next = currentTime + (clock - lastClock) / 1000 * parseFloat(speedSelect.value);
        showTime(next > endTime ? startTime + (next - endTime) % Math.max(endTime - startTime, 1e-300) : next);
      }
      lastClock = clock;
    }
    controls.update();
    renderer.render(scene, camera);
    requestAnimationFrame(animate);
  }

  resize();
  showTime(startTime);
  requestAnimationFrame(animate);

  // A point in the world in CSS pixels from the canvas's top left.
  function onScreen(point) {
    point.project(camera);
    return {x: (point.x + 1) / 2 * canvas.clientWidth, y: (1 - point.y) / 2 * canvas.clientHeight};
  }

  // For scripts and tests (tests/viewer): the page's state and a way to move in time.
  window.liembsView = {
    frameCount: frameCount,
    startTime: startTime,
    endTime: endTime,
    bodyNames: bodies.map((body) => body.name),
    time: () => currentTime,
    play: () => setPlaying(true),
    pause: () => setPlaying(false),
    showTime: (t) => {
      showTime(t);
      renderer.render(scene, camera);
    },
    // Where body `name`'s frame origin is drawn, in CSS pixels from the canvas's top left.
    screenPosition: (name) => {
      const body = bodies.find((candidate) => candidate.name === name);
      return onScreen(body.group.position.clone());
    },
    // The meshes drawn for body `name` (world: the world's): per mesh shape, its file or name,
    // the triangles drawn and where the mean of its vertices is on the screen.
    meshes: (name) => {
      const group = name === 'world' ? world : bodies.find((candidate) => candidate.name === name).group;
      group.updateMatrixWorld(true);
      return group.children.filter((object) => object.name.startsWith('mesh ')).map((object) => {
        let triangles = 0;
        const mean = new THREE.Vector3(), vertex = new THREE.Vector3();
        let count = 0;
        object.traverse((child) => {
          if (!child.isMesh) return;
          const position = child.geometry.getAttribute('position');
          triangles += (child.geometry.index ? child.geometry.index.count : position.count) / 3;
          for (let i = 0; i < position.count; ++i, ++count)
            mean.add(vertex.fromBufferAttribute(position, i).applyMatrix4(child.matrixWorld));
        });
        return {source: object.name.slice(5), triangles: triangles,
                screen: count ? onScreen(mean.divideScalar(count)) : null};
      });
    },
    meshProblems: meshProblems,
  };
})();
